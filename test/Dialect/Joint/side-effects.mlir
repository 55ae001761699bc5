// Memory effects of joint.call_function (from its operator-table entry) and the ao ops:
// upstream CSE and canonicalization merge equal pure reads and drop unused
// ones, but never merge or drop an in-place writer (schema `Tensor(a!)` or a
// hidden writer such as training batch norm), a random op, a collective, or
// an ao transfer, and never merge two reads across a writer of their input.
// RUN: joint-opt %s -split-input-file -cse | FileCheck %s --check-prefixes=CHECK,CSE
// RUN: joint-opt %s -split-input-file -canonicalize | FileCheck %s --check-prefixes=CHECK,CANON

joint.schema @"aten::mm.default" {schema = "aten::mm(Tensor self, Tensor mat2) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "mat2", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.schema @"aten::relu.default" {schema = "aten::relu(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
// CHECK-LABEL: joint.graph @pure_duplicates
// CSE-NEXT: %[[M:.*]] = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"}
// CSE-NEXT: joint.output %[[M]], %[[M]]
// CANON-NEXT: %[[M:.*]] = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"}
// CANON-NEXT: %[[M2:.*]] = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"}
// CANON-NEXT: joint.output %[[M]], %[[M2]]
joint.graph @pure_duplicates(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<4x4xf32> {joint.role = #joint.role<output>}, tensor<4x4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %unused = joint.call_function "aten::relu.default"(%a) {name = "relu"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// An in-place add_ writes %x: its unused result is kept, two equal add_ stay
// two, and the equal reads before and after it are not merged.
joint.schema @"aten::relu.default" {schema = "aten::relu(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.schema @"aten::add_.Tensor" {schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
// CHECK-LABEL: joint.graph @writers
// CHECK-NEXT: joint.call_function "aten::relu.default"(%x) {name = "before"}
// CHECK-NEXT: joint.call_function "aten::add_.Tensor"(%x, %y) {name = "add_"}
// CHECK-NEXT: joint.call_function "aten::add_.Tensor"(%x, %y) {name = "add_"}
// CHECK-NEXT: joint.call_function "aten::relu.default"(%x) {name = "before"}
// CHECK-NEXT: joint.output
joint.graph @writers(%x: tensor<4xf32> {joint.role = #joint.role<buffer>, joint.fqn = "x"}, %y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
  %r0 = joint.call_function "aten::relu.default"(%x) {name = "before"} : (tensor<4xf32>) -> tensor<4xf32>
  %w0 = joint.call_function "aten::add_.Tensor"(%x, %y) {name = "add_"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w1 = joint.call_function "aten::add_.Tensor"(%x, %y) {name = "add_"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r1 = joint.call_function "aten::relu.default"(%x) {name = "before"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %r0, %r1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Training batch norm writes running_mean/running_var although its schema
// marks neither (the hidden-write table): unused, it is still kept.
joint.schema @"aten::native_batch_norm.default" {schema = "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "weight", type = "Tensor?">, #joint.arg<name = "bias", type = "Tensor?">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "training", type = "bool">, #joint.arg<name = "momentum", type = "float">, #joint.arg<name = "eps", type = "float">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
// CHECK-LABEL: joint.graph @hidden_writer
// CHECK-NEXT: joint.call_function "aten::native_batch_norm.default"{{.*}}name = "train"
// CHECK-NOT: name = "eval"
// CHECK: joint.output
joint.graph @hidden_writer(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rm"}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rv"}) -> () {
  %r:3 = joint.call_function "aten::native_batch_norm.default"(%x, %rm, %rv) {name = "train", args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, true, 1.000000e-01, 1.000000e-05]} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %e:3 = joint.call_function "aten::native_batch_norm.default"(%x, %rm, %rv) {name = "eval", args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, false, 1.000000e-01, 1.000000e-05]} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  joint.output
}

// -----

// Random ops advance the RNG state; collectives talk to the process group:
// neither is merged nor dropped.
joint.schema @"aten::rand_like.default" {schema = "aten::rand_like(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
joint.schema @"_c10d_functional::all_reduce.default" {schema = "_c10d_functional::all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "reduce_op", type = "str">, #joint.arg<name = "group_name", type = "str">], returns = [#joint.arg<type = "Tensor">]}
// CHECK-LABEL: joint.graph @random_and_collectives
// CHECK-NEXT: joint.call_function "aten::rand_like.default"(%x) {name = "rand"}
// CHECK-NEXT: joint.call_function "aten::rand_like.default"(%x) {name = "rand"}
// CHECK-NEXT: joint.call_function "aten::rand_like.default"(%x) {name = "rand"}
// CHECK-NEXT: joint.call_function "_c10d_functional::all_reduce.default"
// CHECK-NEXT: joint.call_function "_c10d_functional::all_reduce.default"
// CHECK-NEXT: joint.output
joint.graph @random_and_collectives(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::rand_like.default"(%x) {name = "rand"} : (tensor<4xf32>) -> tensor<4xf32>
  %b = joint.call_function "aten::rand_like.default"(%x) {name = "rand"} : (tensor<4xf32>) -> tensor<4xf32>
  %unused = joint.call_function "aten::rand_like.default"(%x) {name = "rand"} : (tensor<4xf32>) -> tensor<4xf32>
  %c0 = joint.call_function "_c10d_functional::all_reduce.default"(%x) {name = "ar", args = [#joint.operand<0>, "sum", "0"]} : (tensor<4xf32>) -> tensor<4xf32>
  %c1 = joint.call_function "_c10d_functional::all_reduce.default"(%x) {name = "ar", args = [#joint.operand<0>, "sum", "0"]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Two offloads of one value, each with its own waits and reloads: no ao op
// is merged, and the forward waits stay although nothing reads them but the
// reloads.
joint.schema @"aten::mm.default" {schema = "aten::mm(Tensor self, Tensor mat2) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "mat2", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
// CHECK-LABEL: joint.graph @ao_transfers
// CHECK: ao.offload
// CHECK-NEXT: ao.offload
// CHECK-NEXT: ao.wait_tensor
// CHECK-NEXT: ao.wait_tensor
// CHECK-NEXT: ao.reload
// CHECK-NEXT: ao.wait_tensor
// CHECK-NEXT: ao.reload
// CHECK-NEXT: ao.wait_tensor
// CHECK-NEXT: joint.output
joint.graph @ao_transfers(%x: tensor<512x512xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<512x512xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<512x512xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"} : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %h0 = ao.offload %a : tensor<512x512xf32>
  %h1 = ao.offload %a : tensor<512x512xf32>
  %w0 = ao.wait_tensor %h0 keepalive %a : tensor<512x512xf32> : tensor<512x512xf32>
  %w1 = ao.wait_tensor %h1 keepalive %a : tensor<512x512xf32> : tensor<512x512xf32>
  %r0 = ao.reload %w0 to "cuda:0" : tensor<512x512xf32>
  %rw0 = ao.wait_tensor %r0 : tensor<512x512xf32>
  %r1 = ao.reload %w1 to "cuda:0" : tensor<512x512xf32>
  %rw1 = ao.wait_tensor %r1 : tensor<512x512xf32>
  joint.output %rw0 : tensor<512x512xf32>
}
