// Hidden writers: kernels that update arguments their schema
// does not mark `Tensor(a!)` are writers in StorageAliasAnalysis, the one
// place every pass asks whether an op writes. One case per family of the
// table in JointOps.cpp (docs/passes.md, "Hidden writers").
// RUN: joint-opt %s -split-input-file -joint-print-storage-groups -verify-diagnostics -o /dev/null

// Family 1, batch norm with a `training` flag (native_batch_norm, cudnn,
// miopen, batch_norm, _batch_norm_impl_index): in training mode the kernel
// updates running_mean and running_var; the schema marks neither.
joint.schema @"aten::native_batch_norm.default" {schema = "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "weight", type = "Tensor?">, #joint.arg<name = "bias", type = "Tensor?">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "training", type = "bool">, #joint.arg<name = "momentum", type = "float">, #joint.arg<name = "eps", type = "float">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
// expected-remark @+2 {{storage 1 owner rm members [rm] writers [bn] graph-input}}
// expected-remark @+1 {{storage 2 owner rv members [rv] writers [bn] graph-input}}
joint.graph @native_batch_norm_training_writes_running_stats(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rm", joint.name = "rm", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 1>}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rv", joint.name = "rv", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 2>}) -> () {
  %r:3 = joint.call_function "aten::native_batch_norm.default"(%x, %rm, %rv) {name = "bn", args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, true, 1.000000e-01, 1.000000e-05]} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  joint.output
}

// -----

// The flag given by name (kwargs) counts the same; without recorded
// args (operands are the positional arguments) the flag counts as true.
joint.schema @"aten::cudnn_batch_norm.default" {schema = "aten::cudnn_batch_norm(Tensor input, Tensor weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float exponential_average_factor, float epsilon) -> (Tensor, Tensor, Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "weight", type = "Tensor">, #joint.arg<name = "bias", type = "Tensor?">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "training", type = "bool">, #joint.arg<name = "exponential_average_factor", type = "float">, #joint.arg<name = "epsilon", type = "float">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
joint.schema @"aten::miopen_batch_norm.default" {schema = "aten::miopen_batch_norm(Tensor input, Tensor weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float exponential_average_factor, float epsilon) -> (Tensor, Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "weight", type = "Tensor">, #joint.arg<name = "bias", type = "Tensor?">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "training", type = "bool">, #joint.arg<name = "exponential_average_factor", type = "float">, #joint.arg<name = "epsilon", type = "float">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
// expected-remark @+2 {{storage 1 owner rm members [rm] writers [cudnn, miopen] graph-input}}
// expected-remark @+1 {{storage 2 owner rv members [rv] writers [cudnn, miopen] graph-input}}
joint.graph @cudnn_and_miopen_batch_norm_write_running_stats(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x"}, %w: tensor<3xf32> {joint.role = #joint.role<param>, joint.fqn = "w", joint.name = "w"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rm", joint.name = "rm", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 1>}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rv", joint.name = "rv", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 2>}) -> () {
  %r:4 = joint.call_function "aten::cudnn_batch_norm.default"(%x, %w, %rm, %rv) {name = "cudnn", args = [#joint.operand<0>, #joint.operand<1>, unit, #joint.operand<2>, #joint.operand<3>], kwargs = {training = true, exponential_average_factor = 1.000000e-01, epsilon = 1.000000e-05}} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %s:3 = joint.call_function "aten::miopen_batch_norm.default"(%x, %w, %w, %rm, %rv) {name = "miopen"} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  joint.output
}

// -----

// In eval mode (training=false) batch norm only reads the statistics: no
// writer, so no storage is reported.
joint.schema @"aten::native_batch_norm.default" {schema = "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "weight", type = "Tensor?">, #joint.arg<name = "bias", type = "Tensor?">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "training", type = "bool">, #joint.arg<name = "momentum", type = "float">, #joint.arg<name = "eps", type = "float">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
joint.graph @native_batch_norm_eval_reads_only(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rm", joint.name = "rm", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 1>}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rv", joint.name = "rv", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 2>}) -> () {
  %r:3 = joint.call_function "aten::native_batch_norm.default"(%x, %rm, %rv) {name = "bn", args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, false, 1.000000e-01, 1.000000e-05]} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  joint.output
}

// -----

// Family 2, instance norm: the statistics are written when
// use_input_stats=true (torch folds the per-instance statistics back into
// running_mean/running_var).
joint.schema @"aten::instance_norm.default" {schema = "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "weight", type = "Tensor?">, #joint.arg<name = "bias", type = "Tensor?">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "use_input_stats", type = "bool">, #joint.arg<name = "momentum", type = "float">, #joint.arg<name = "eps", type = "float">, #joint.arg<name = "cudnn_enabled", type = "bool">], returns = [#joint.arg<type = "Tensor">]}
// expected-remark @+2 {{storage 1 owner rm members [rm] writers [in_train] graph-input}}
// expected-remark @+1 {{storage 2 owner rv members [rv] writers [in_train] graph-input}}
joint.graph @instance_norm_with_input_stats_writes_running_stats(%x: tensor<2x3x5xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rm", joint.name = "rm", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 1>}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rv", joint.name = "rv", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 2>}) -> () {
  %a = joint.call_function "aten::instance_norm.default"(%x, %rm, %rv) {name = "in_train", args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, true, 1.000000e-01, 1.000000e-05, false]} : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5xf32>
  %b = joint.call_function "aten::instance_norm.default"(%x, %rm, %rv) {name = "in_eval", args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, false, 1.000000e-01, 1.000000e-05, false]} : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5xf32>
  joint.output
}

// -----

// Family 3, statistics updates without a flag (batch_norm_update_stats and
// SyncBatchNorm's batch_norm_gather_stats[_with_counts]): always writers.
joint.schema @"aten::batch_norm_update_stats.default" {schema = "aten::batch_norm_update_stats(Tensor input, Tensor? running_mean, Tensor? running_var, float momentum) -> (Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "momentum", type = "float">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
joint.schema @"aten::batch_norm_gather_stats_with_counts.default" {schema = "aten::batch_norm_gather_stats_with_counts(Tensor input, Tensor mean, Tensor invstd, Tensor? running_mean, Tensor? running_var, float momentum, float eps, Tensor counts) -> (Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "mean", type = "Tensor">, #joint.arg<name = "invstd", type = "Tensor">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "momentum", type = "float">, #joint.arg<name = "eps", type = "float">, #joint.arg<name = "counts", type = "Tensor">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
// expected-remark @+2 {{storage 1 owner rm members [rm] writers [update, gather] graph-input}}
// expected-remark @+1 {{storage 2 owner rv members [rv] writers [update, gather] graph-input}}
joint.graph @running_stat_updates_always_write(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rm", joint.name = "rm", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 1>}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rv", joint.name = "rv", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 2>}, %m: tensor<2x3xf32> {joint.role = #joint.role<input>, joint.path = "m", joint.name = "m"}, %c: tensor<2xf32> {joint.role = #joint.role<input>, joint.path = "c", joint.name = "c"}) -> () {
  %u:2 = joint.call_function "aten::batch_norm_update_stats.default"(%x, %rm, %rv) {name = "update", args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 1.000000e-01]} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %g:2 = joint.call_function "aten::batch_norm_gather_stats_with_counts.default"(%x, %m, %m, %rm, %rv, %c) {name = "gather", args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, 1.000000e-01, 1.000000e-05, #joint.operand<5>]} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  joint.output
}

// -----

// Without an operator-table entry the written arguments cannot be located:
// every tensor operand of a hidden writer counts as written.
// expected-remark @+3 {{storage 0 owner x members [x] writers [bn] graph-input}}
// expected-remark @+2 {{storage 1 owner rm members [rm] writers [bn] graph-input}}
// expected-remark @+1 {{storage 2 owner rv members [rv] writers [bn] graph-input}}
joint.graph @hidden_writer_without_schema_is_conservative(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x", joint.meta = #joint.tensor<[4, 3], strides = [3, 1], offset = 0, device = "cpu", storage = 0>}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rm", joint.name = "rm", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 1>}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "rv", joint.name = "rv", joint.meta = #joint.tensor<[3], strides = [1], offset = 0, device = "cpu", storage = 2>}) -> () {
  %r:3 = joint.call_function "aten::native_batch_norm.default"(%x, %rm, %rv) {name = "bn"} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  joint.output
}
