// The memory plan problem and the greedy's plan as JSON (format=json), the
// form bench/plan_optimality reads, and the price of a given plan
// (price=true: the planner's simulator, the real appliers and models). One
// block of exp -> mm -> relu; a0 and m0 may be recomputed, every forward
// result may move to host. At 390 B (128 B resident) the greedy recomputes
// a0. Recomputing a0 lowers the applied peak from 392 B to 328 B for one
// replay of exp; offloading a0 does too, but its copies stall the step.
// RUN: joint-opt %s -test-print-memory-plan-problem="budget-bytes=390 format=json solve=true" -o /dev/null | FileCheck %s
// RUN: joint-opt %s -test-print-memory-plan-problem="budget-bytes=390 price=true recompute=0" -o /dev/null | FileCheck %s --check-prefix=TEXT
// RUN: joint-opt %s -test-print-memory-plan-problem="budget-bytes=390 format=json price=true offload=0:0:1" -o /dev/null | FileCheck %s --check-prefix=OFFLOAD
// RUN: not joint-opt %s -test-print-memory-plan-problem="price=true recompute=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOT-CANDIDATE
// RUN: not joint-opt %s -test-print-memory-plan-problem="price=true recompute=2" -o /dev/null 2>/dev/null | FileCheck %s --allow-empty --check-prefix=NOTHING
// RUN: not joint-opt %s -test-print-memory-plan-problem="price=true offload=4:0:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-GROUP
// RUN: not joint-opt %s -test-print-memory-plan-problem="price=true offload=0:3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-OFFLOAD
// RUN: not joint-opt %s -test-print-memory-plan-problem="format=yaml" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-FORMAT

// CHECK: {"graph": "one_block",
// CHECK-NEXT:  "problem": {"backward_anchors":[],"boundary":4,"budget_bytes":390,"forward_anchors":[0],"host_budget_bytes":0,"link_bytes_per_second":55000000000,"num_blocks":1,"resident_bytes":128,
// CHECK-NEXT:  "timeline": [64,128,192,196,200,264,260,196,68],
// CHECK-NEXT:  "ops": [
// CHECK-NEXT:   {"block":0,"defines":[0],"name":"a0","seconds":2.6666666666666665e-11},
// CHECK-NEXT:   {"block":0,"defines":[1],"name":"m0","seconds":3.9999999999999998e-11},
// CHECK-NEXT:   {"block":0,"defines":[2],"name":"r0","seconds":2.6666666666666665e-11},
// CHECK-NEXT:   {"block":null,"defines":[3],"name":"s","seconds":1.4166666666666666e-11},
// CHECK-NEXT:   {"block":null,"defines":[],"name":"g","seconds":1.6666666666666666e-12},
// CHECK-NEXT:   {"block":null,"defines":[],"name":"g1","seconds":2.7499999999999999e-11},
// CHECK-NEXT:   {"block":null,"defines":[],"name":"h2","seconds":3.9999999999999998e-11},
// CHECK-NEXT:   {"block":null,"defines":[],"name":"gw0","seconds":3.9999999999999998e-11},
// CHECK-NEXT:   {"block":null,"defines":[],"name":"joint.output","seconds":0}],
// CHECK-NEXT:  "storages": [
// CHECK-NEXT:   {"alloc":0,"bytes":64,"closure":[0],"first_backward":7,"free":7,"frontier":[],"last_forward":1,"name":"a0","recomputable":true},
// CHECK-NEXT:   {"alloc":1,"bytes":64,"closure":[1],"first_backward":6,"free":6,"frontier":[0],"last_forward":2,"name":"m0","recomputable":true},
// CHECK-NEXT:   {"alloc":2,"bytes":64,"closure":[],"first_backward":5,"free":5,"frontier":[],"last_forward":3,"name":"r0","recomputable":false},
// CHECK-NEXT:   {"alloc":3,"bytes":4,"closure":[],"first_backward":4,"free":8,"frontier":[],"last_forward":3,"name":"s","recomputable":false}],
// CHECK-NEXT:  "offload_candidates": [
// CHECK-NEXT:   {"producer":0,"targets":{{\[\[}}0,0]]},
// CHECK-NEXT:   {"producer":1,"targets":{{\[\[}}1,1]]},
// CHECK-NEXT:   {"producer":2,"targets":{{\[\[}}2,2]]}]},
// CHECK-NEXT:  "greedy": {"recompute": [0],
// CHECK-NEXT:  "recomputed_bytes": 64, "offloaded_bytes": 0, "modelled_transient_bytes": 200,
// CHECK-NEXT:  "groups": [
// CHECK-NEXT:   {"block":0,"bytes":64,"chosen":false,"defer":0,"defs":[0],"members":[0],"prefetch":0,"producer":0},
// CHECK-NEXT:   {"block":0,"bytes":64,"chosen":false,"defer":0,"defs":[1],"members":[1],"prefetch":0,"producer":1},
// CHECK-NEXT:   {"block":0,"bytes":64,"chosen":false,"defer":0,"defs":[2],"members":[2],"prefetch":0,"producer":2}]},
// CHECK-NEXT:  "reached": true}

// TEXT: graph @one_block
// TEXT: priced: peak 328 B, step 2.43333e-10 s, recompute 2.66667e-11 s, exposed 0 s

// OFFLOAD: {"graph": "one_block",
// OFFLOAD:  "price": {"peak_bytes": 328, "step_seconds": 2.4631060606060599e-09, "recompute_seconds": 0, "exposed_seconds": 2.2464393939393934e-09, "exposed_offloads": [0], "exposed_block_offloads": [0, 1, 2]}}

// NOT-CANDIDATE: error: price: storage 2 is not a recompute candidate
// A bad plan fails before anything is printed.
// NOTHING-NOT: {{.}}
// NO-GROUP: error: price: op 4 heads no offload group
// BAD-OFFLOAD: error: price: offload '0:3' is not producer:prefetch:defer with distances < 3
// BAD-FORMAT: error: test-print-memory-plan-problem: format must be text or json, got 'yaml'

joint.graph @one_block(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}, %w0: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "layers.0.w", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 20>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4x4xf32> {joint.role = #joint.role<grad>, joint.fqn = "layers.0.w"}) attributes {joint.model = {block_containers = [{blocks = ["layers.0"], container = "layers", owner = ""}]}} {
  %a0 = joint.call_function "aten::exp.default"(%x) {name = "a0", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m0 = joint.call_function "aten::mm.default"(%a0, %w0) {name = "m0", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r0 = joint.call_function "aten::relu.default"(%m0) {name = "r0", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = joint.call_function "aten::sum.default"(%r0) {name = "s", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 7>]} : (tensor<4x4xf32>) -> tensor<f32>
  %g = joint.call_function "aten::ones_like.default"(%s) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 8>]} : (tensor<f32>) -> tensor<f32>
  %g1 = joint.call_function "aten::mul.Tensor"(%r0, %g) {name = "g1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 9>]} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %h2 = joint.call_function "aten::mul.Tensor"(%g1, %m0) {name = "h2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 15>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %gw0 = joint.call_function "aten::mm.default"(%a0, %h2) {name = "gw0", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 16>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %s, %gw0 : tensor<f32>, tensor<4x4xf32>
}
