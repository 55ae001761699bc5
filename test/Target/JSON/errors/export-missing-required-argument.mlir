// A hand-written call without recorded args exports its operands as the
// positional arguments; when they leave a required schema argument unset,
// the export is one error naming the node and nothing is written (the
// importer, and torch, would refuse the document).
// RUN: rm -f %t.json
// RUN: not joint-translate --export-joint-json %s -o %t.json 2>&1 | FileCheck %s
// RUN: not ls %t.json

joint.schema @"aten::mm.default" {schema = "aten::mm(Tensor self, Tensor mat2) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "mat2", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.graph @g(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x"}) -> (tensor<4x4xf32> {joint.role = #joint.role<output>}) {
  // CHECK: error: node 'mm' (aten::mm.default) records no args and its 1 operand(s) leave required argument 'mat2' unset: give it in args or kwargs
  %0 = joint.call_function "aten::mm.default"(%x) {name = "mm"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %0 : tensor<4x4xf32>
}
