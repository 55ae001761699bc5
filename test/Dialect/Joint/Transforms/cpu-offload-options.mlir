// joint-cpu-offload option errors: negative, non-finite and
// non-numeric values are rejected with a clear message, never clamped.
// RUN: not joint-opt %s -joint-cpu-offload="budget-gib=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// budget-gb counted GiB here but GB (1e9 bytes) in joint-plan-memory: it is
// refused, whatever its value, in the pass and the pipeline.
// RUN: not joint-opt %s -joint-cpu-offload="budget-gb=1" 2>&1 | FileCheck %s --check-prefix=REMOVED
// RUN: not joint-opt %s -joint-tag-cpu-offload="budget-gb=-1" 2>&1 | FileCheck %s --check-prefix=REMOVED
// RUN: not joint-opt %s -joint-cpu-offload="budget-gib=abc" 2>&1 | FileCheck %s --check-prefix=NON-NUMERIC
// RUN: not joint-opt %s -joint-cpu-offload="budget-gib=nan" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not joint-opt %s -joint-cpu-offload="budget-gib=inf" 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not joint-opt %s -joint-cpu-offload="budget-gib=1 budget-gb=1" 2>&1 | FileCheck %s --check-prefix=REMOVED
// RUN: not joint-opt %s -joint-cpu-offload="min-bytes=-5" 2>&1 | FileCheck %s --check-prefix=MIN-BYTES
// RUN: not joint-opt %s -joint-cpu-offload="min-bytes=1MiB" 2>&1 | FileCheck %s --check-prefix=MIN-BYTES-TEXT
// RUN: not joint-opt %s -joint-cpu-offload="prefetch-regions=-1" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not joint-opt %s -joint-cpu-offload="scope=layers" 2>&1 | FileCheck %s --check-prefix=SCOPE
// The options are checked before the graph is touched: no partial output.
// RUN: rm -f %t.mlir
// RUN: not joint-opt %s -joint-cpu-offload="budget-gib=-1" -o %t.mlir
// RUN: not test -e %t.mlir

// NEGATIVE: {{^}}joint-opt: error: joint-tag-cpu-offload: budget-gib must be a finite number of GiB >= 0 (0 means no limit), got -1{{$}}
// REMOVED: {{^}}joint-opt: error: joint-tag-cpu-offload: budget-gb is no longer accepted (it counted GiB, 2^30 bytes, unlike the planner's budget-gb); give the host budget as budget-gib{{$}}
// NON-NUMERIC: for the --budget-gib option: 'abc' value invalid for floating point argument!
// NAN: {{^}}joint-opt: error: joint-tag-cpu-offload: budget-gib must be a finite number of GiB >= 0 (0 means no limit), got nan
// INF: {{^}}joint-opt: error: joint-tag-cpu-offload: budget-gib must be a finite number of GiB >= 0 (0 means no limit), got inf{{$}}
// MIN-BYTES: {{^}}joint-opt: error: joint-tag-cpu-offload: min-bytes must be >= 0, got -5
// MIN-BYTES-TEXT: for the --min-bytes option: '1MiB' value invalid for long argument!
// PREFETCH: for the --prefetch-regions option: '-1' value invalid for uint argument!
// SCOPE: for the --scope option: Cannot find option named 'layers'!
joint.graph @options_are_checked_first(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}
