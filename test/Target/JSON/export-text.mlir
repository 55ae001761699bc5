// The exporter's text, byte for byte: one node per line as compact JSON with
// sorted keys (nlohmann::json::dump's), strings escaped as nlohmann escapes
// them (invalid UTF-8 becomes U+FFFD), doubles in shortest round-trip form,
// facts of tensors without joint.meta contiguous, getitem nodes after a
// multi-output op. canonical_lines.py re-dumps every line with Python's json
// and compares, here and on the examples after checkpointing and offload.
// RUN: joint-translate --export-joint-json %s -o %t.json
// RUN: FileCheck %s < %t.json
// RUN: python3 %S/Inputs/canonical_lines.py %t.json
// RUN: joint-opt %joint_src_root/examples/llama-tiny-fp32.json -joint-tag-recompute-policy='mode=full layer-indices=1' -joint-cpu-offload=min-bytes=1024 -joint-remat | joint-translate --export-joint-json | python3 %S/Inputs/canonical_lines.py -
// RUN: joint-opt %joint_src_root/examples/mlp-dynamic-seq.json --joint-activation-checkpoint=mode=full | joint-translate --export-joint-json | python3 %S/Inputs/canonical_lines.py -

// CHECK: {"args":[],"backward":false,"kind":"placeholder","kwargs":{},"module_stack":[],"name":"arg0_1","outputs":[{"device":"cpu","dtype":"float32","offset":0,"sizes":[2,4],"storage":0,"strides":[4,1],"t":"tensor"}],"recompute":null,"seq_nr":null,"stack_trace":null,"target":null},
// CHECK: {"args":[{"i":0,"t":"node","v":"arg0_1"},{"i":0,"t":"node","v":"arg1_1"}],"backward":false,"kind":"call_function","kwargs":{},"module_stack":[{"class":"Net\"é","fqn":""}],"name":"mm",{{.*}}"stack_trace":"quote \" back \\ nl\n tab\t ctl\u0001\u001f del{{.}} slash / é bad � end","target":"aten::mm.default"},
// CHECK-NEXT: {"args":[{"i":0,"t":"node","v":"mm"},{"t":"list","v":[{"t":"int","v":1}]}],"backward":false,"kind":"call_function","kwargs":{"correction":{"t":"int","v":0},"keepdim":{"t":"bool","v":true}},"module_stack":[],"name":"var_mean","outputs":[{"device":"cpu",{{.*}}"storage":3,{{.*}}},{"device":"cpu",{{.*}}"storage":4,{{.*}}}],"recompute":null,"seq_nr":1,"stack_trace":null,"target":"aten::var_mean.correction"},
// CHECK-NEXT: {"args":[{"i":0,"t":"node","v":"var_mean"},{"t":"int","v":0}],"backward":false,"kind":"call_function","kwargs":{},"module_stack":[],"name":"getitem","outputs":[{"device":"cpu","dtype":"float32","offset":0,"sizes":[2,1],"storage":3,"strides":[1,1],"t":"tensor"}],"recompute":null,"seq_nr":1,"stack_trace":null,"target":"getitem"},
// CHECK-NEXT: {"args":[{"i":1,"t":"node","v":"var_mean"},{"t":"int","v":1}],{{.*}}"name":"var_mean_getitem",{{.*}}"storage":4,{{.*}}"target":"getitem"},
// CHECK-NEXT: {{.*}}"kwargs":{"alpha":{"t":"float","v":1e-05}},{{.*}}"name":"add",
// CHECK-NEXT: {{.*}}"kwargs":{"alpha":{"t":"float","v":"nan"}},{{.*}}"name":"add_1",
// CHECK-NEXT: {{.*}}"kwargs":{"alpha":{"t":"float","v":2.5e+21}},{{.*}}"name":"add_2",
// CHECK-NEXT: {"args":[{"i":0,"t":"node","v":"add_2"}],"backward":false,"kind":"output","kwargs":{},"module_stack":[],"name":"output","outputs":[],"recompute":null,"seq_nr":null,"stack_trace":null,"target":null}
// CHECK-NEXT: ],

joint.schema @"aten::add.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor">], schema = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", tags = ["core", "pointwise"]}
joint.schema @"aten::mm.default" {arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "mat2", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], schema = "aten::mm(Tensor self, Tensor mat2) -> Tensor", tags = ["core"]}
joint.schema @"aten::var_mean.correction" {arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "dim", type = "int[1]?", default_value = "None">, #joint.arg<name = "correction", type = "Scalar?", kwarg_only = true, default_value = "None">, #joint.arg<name = "keepdim", type = "bool", kwarg_only = true, default_value = "False">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], schema = "aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)", tags = ["core"]}
joint.graph @text(%x: tensor<2x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<2x1xf32> {joint.role = #joint.role<loss>}) {
  %mm = joint.call_function "aten::mm.default"(%x, %w) {name = "mm", module_stack = [#joint.module<"", "Net\22\C3\A9">], seq_nr = 0 : i64, stack_trace = "quote \22 back \\ nl\0A tab\09 ctl\01\1F del\7F slash / \C3\A9 bad \FF end"} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %v, %m = joint.call_function "aten::var_mean.correction"(%mm) {args = [#joint.operand<0>, [1]], kwargs = {correction = 0 : i64, keepdim = true}, name = "var_mean", result_names = ["getitem", ""], seq_nr = 1 : i64} : (tensor<2x4xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>)
  %a = joint.call_function "aten::add.Tensor"(%v, %m) {args = [#joint.operand<0>, #joint.operand<1>], kwargs = {alpha = 1.0e-05 : f64}, name = "add", seq_nr = 2 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %b = joint.call_function "aten::add.Tensor"(%a, %a) {args = [#joint.operand<0>, #joint.operand<1>], kwargs = {alpha = 0x7FF8000000000000 : f64}, name = "add_1"} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %c = joint.call_function "aten::add.Tensor"(%b, %b) {args = [#joint.operand<0>, #joint.operand<1>], kwargs = {alpha = 2.5e+21 : f64}, name = "add_2"} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  joint.output %c : tensor<2x1xf32>
}
