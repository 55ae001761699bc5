// A file a pass writes (joint-memory-report's output=) appears only when the
// whole run succeeds, like the -o file: a later pass that fails leaves
// neither the report nor its temporary behind.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not joint-opt %joint_src_root/examples/mlp.json --pass-pipeline='builtin.module(joint.graph(joint-memory-report{output=%t/r.json format=json},joint-tag-cpu-offload{scope=attention}))' -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: ls -A %t | count 0
// The same with flags, and with the failure in a module pass (the planner).
// RUN: not joint-opt %joint_src_root/examples/mlp.json --joint-memory-report=output=%t/r.txt "--joint-plan-memory=budget-gb=1e-9" -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: ls -A %t | count 0
// Reports before the failing chunk of a --split-input-file run are removed too.
// RUN: not joint-opt %s --split-input-file --joint-memory-report=output=%t/split.txt -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: ls -A %t | count 0
// A run that succeeds writes the report (two reports to one path: the last).
// RUN: joint-opt %joint_src_root/examples/mlp.json --pass-pipeline='builtin.module(joint.graph(joint-memory-report{output=%t/r.json format=json label=first},joint-memory-report{output=%t/r.json format=json label=second}))' -o %t/out.mlir
// RUN: ls -A %t | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=JSON < %t/r.json
// A path that is no regular file is written in place, not replaced by a
// rename: /dev/null stays a device, a symbolic link a link.
// RUN: joint-opt %joint_src_root/examples/mlp.json --joint-memory-report=output=/dev/null -o /dev/null
// RUN: test -c /dev/null
// RUN: rm -f %t/r.json && echo old > %t/real.txt && ln -s real.txt %t/link.txt
// RUN: joint-opt %joint_src_root/examples/mlp.json --joint-memory-report=output=%t/link.txt -o /dev/null
// RUN: test -L %t/link.txt
// RUN: FileCheck %s --check-prefix=TEXT < %t/real.txt

// FAIL: mlp.json:1:1: error: joint-tag-cpu-offload scope=attention: graph @mlp has no attention module
// PLAN: error: joint-plan-memory: budget 1 B is not reachable
// SPLIT: report-files.mlir:{{[0-9]+}}:1: error: joint-memory-report: expects a module with exactly one joint.graph, found 2
// FILES: out.mlir
// FILES-NEXT: r.json
// FILES-NOT: {{.}}
// JSON: "format": "joint-memory-report",
// JSON-NEXT: "version": 1,
// JSON-NEXT: "graph": "mlp",
// JSON-NEXT: "label": "second",
// TEXT: == joint-memory-report @mlp

joint.graph @one(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

// -----

joint.graph @two_a(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}
joint.graph @two_b(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}
