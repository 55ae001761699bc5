// joint-fuse-elementwise: an elementwise producer is fused into every user
// (a clone per user) when no step needs more memory for it: its only user is
// the next op, or the inputs it would keep alive longer take at most the
// bytes of its result; a user broadcasting it repeats a cheap producer.
// RUN: joint-opt %s -pass-pipeline='builtin.module(func.func(joint-fuse-elementwise))' | FileCheck %s

// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[RED:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @adjacent(
// CHECK-NEXT: tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[R:.+]] = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]} ins(%arg0, %arg1, %arg0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[P:.+]]: f32, %[[Q:.+]]: f32, %[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[P]], %[[Q]] : f32
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[S]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[R]] : tensor<4xf32>

// A producer reading arguments only (nothing lives longer) is fused into
// both its users, one of them separated from it; the returned one stays.
// CHECK-LABEL: func.func @apart_and_shared(
// CHECK: %[[C:.+]] = linalg.generic {{.+}} ins(%arg1, %arg0 : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[Y:.+]]: f32, %[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[X]] : f32
// CHECK-NEXT: arith.addf %[[Y]], %[[N]] : f32
// CHECK: %[[B:.+]] = linalg.generic {{.+}} ins(%arg0, %[[C]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X2:.+]]: f32, %[[C2:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[N2:.+]] = arith.negf %[[X2]] : f32
// CHECK-NEXT: arith.mulf %[[N2]], %[[C2]] : f32
// CHECK: return %[[B]], %[[C]]

// The truncation's f32 input dies at it and is twice its bytes: with the
// returned exp in between, fusing would keep it alive longer; it stays.
// CHECK-LABEL: func.func @would_extend(
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[T:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK: %[[U:.+]] = linalg.generic {{.+}} ins(%arg1 : tensor<4xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: %[[V:.+]] = linalg.generic {{.+}} ins(%[[T]], %[[U]] : tensor<4xbf16>, tensor<4xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK: return %[[V]], %[[U]]

// A reduction reading a kept size-1 dimension broadcast repeats the cheap
// rsqrt per element instead of a kernel of its own.
// CHECK-LABEL: func.func @broadcast(
// CHECK: %[[F:.+]] = linalg.fill
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[RED]]], iterator_types = ["parallel", "reduction"]} ins(%arg1, %arg0 : tensor<4x8xf32>, tensor<4x1xf32>) outs(%[[F]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[Y:.+]]: f32, %[[X:.+]]: f32, %[[O:.+]]: f32):
// CHECK-NEXT: %[[R:.+]] = math.rsqrt %[[X]] : f32
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[Y]], %[[R]] : f32
// CHECK-NEXT: arith.addf %[[O]], %[[M]] : f32
#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @adjacent(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%a, %x : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func @apart_and_shared(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e0 = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%y, %a : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %n = arith.addf %p, %q : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%a, %c : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %b, %c : tensor<4xf32>, tensor<4xf32>
}
func.func @would_extend(%x: tensor<4x8xf32>, %z: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.addf %o, %p : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%s : tensor<4xf32>) outs(%e1 : tensor<4xbf16>) {
  ^bb0(%p: f32, %o: bf16):
    %n = arith.truncf %p : f32 to bf16
    linalg.yield %n : bf16
  } -> tensor<4xbf16>
  %e2 = tensor.empty() : tensor<4xbf16>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%z : tensor<4xbf16>) outs(%e2 : tensor<4xbf16>) {
  ^bb0(%p: bf16, %o: bf16):
    %n = math.exp %p : bf16
    linalg.yield %n : bf16
  } -> tensor<4xbf16>
  %e3 = tensor.empty() : tensor<4xbf16>
  %v = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%t, %u : tensor<4xbf16>, tensor<4xbf16>) outs(%e3 : tensor<4xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %o: bf16):
    %n = arith.addf %p, %q : bf16
    linalg.yield %n : bf16
  } -> tensor<4xbf16>
  return %v, %u : tensor<4xbf16>, tensor<4xbf16>
}
func.func @broadcast(%x: tensor<4x1xf32>, %y: tensor<4x8xf32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x1xf32>) outs(%e0 : tensor<4x1xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = math.rsqrt %p : f32
    linalg.yield %n : f32
  } -> tensor<4x1xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row, #red], iterator_types = ["parallel", "reduction"]} ins(%y, %r : tensor<4x8xf32>, tensor<4x1xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
