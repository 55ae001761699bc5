// joint-cpu-entry: the converted step becomes @joint_entry, inputs are
// read-only views of caller buffers, results go into caller buffers.
// RUN: joint-opt %s -split-input-file -joint-cpu-entry -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @joint_entry(
// CHECK-SAME: %[[X:.*]]: memref<4x?xf32> {joint.path = "x", joint.role = #joint.role<input>},
// CHECK-SAME: %[[N:.*]]: i64,
// CHECK-SAME: %[[OUT:.*]]: memref<4x?xf32> {joint.role = #joint.role<output>},
// CHECK-SAME: %[[OUTN:.*]]: memref<i64>)
// CHECK-SAME: attributes {joint.graph_name = "step", joint.num_inputs = 2 : i64}
// CHECK-NEXT: %[[T:.*]] = bufferization.to_tensor %[[X]] restrict : memref<4x?xf32> to tensor<4x?xf32>
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[T]] : tensor<4x?xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[EXP]] in restrict writable %[[OUT]] : (tensor<4x?xf32>, memref<4x?xf32>) -> ()
// CHECK-NEXT: memref.store %[[N]], %[[OUTN]][] : memref<i64>
// CHECK-NEXT: return
// CHECK-NOT: func.func @step
func.func @step(%x: tensor<4x?xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %n: i64)
    -> (tensor<4x?xf32> {joint.role = #joint.role<output>}, i64) {
  %0 = math.exp %x : tensor<4x?xf32>
  return %0, %n : tensor<4x?xf32>, i64
}

// -----

// expected-error @+1 {{joint-cpu-entry: expected one public function (the converted graph), found 2}}
module {
  func.func @a() { return }
  func.func @b() { return }
}

// -----

module {
  // expected-error @+1 {{joint-cpu-entry: argument 0 has type 'f32', not a ranked tensor or i64}}
  func.func @scalar_float_argument(%x: f32) { return }
}
