// joint-memory-report rejects bad options and modules it cannot report on
// with one clear error, and never writes a half report.
// RUN: not joint-opt %s -joint-memory-report="format=xml" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not joint-opt %s -joint-memory-report="link-gbps=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LINK
// RUN: not joint-opt %s -joint-memory-report="peak-tflops=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TFLOPS
// RUN: not joint-opt %s -joint-memory-report="hbm-gbps=nan" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HBM
// RUN: not joint-opt %s -joint-memory-report="output=%t.missing/report.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTPUT
// A write that fails (a full disk) is an error, not an abort.
// RUN: not joint-opt %s -joint-memory-report="output=/dev/full" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FULL
// The report runs per joint.graph: a module without one gets no report (a
// module with two is refused: per-graph.mlir).
// RUN: echo 'module {}' | joint-opt -joint-memory-report 2>&1 | FileCheck %s --check-prefix=NOGRAPH

// FORMAT: for the --format option: Cannot find option named 'xml'!
// LINK: {{^}}joint-opt: error: joint-memory-report: link-gbps must be a positive number, got 0
// TFLOPS: {{^}}joint-opt: error: joint-memory-report: peak-tflops must be a positive number, got -1{{$}}
// HBM: {{^}}joint-opt: error: joint-memory-report: hbm-gbps must be a positive number, got nan
// OUTPUT: error: joint-memory-report: cannot write '{{.*}}.missing/report.json':
// FULL: memory-report-errors.mlir:{{[0-9]+}}:1: error: joint-memory-report: cannot write '/dev/full': No space left on device
// FULL-NOT: LLVM ERROR
// NOGRAPH-NOT: peak
// NOGRAPH: module {
// NOGRAPH-NOT: peak

joint.graph @g(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}
