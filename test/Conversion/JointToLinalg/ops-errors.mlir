// Refusals of the linear/reduction/normalization/attention/indirect/pooling families:
// one error naming the target, the node and the pattern's reason.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -convert-joint-to-linalg -mlir-print-op-on-diagnostic=false

joint.graph @sdpa_dropout_needs_rng(%q: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::_scaled_dot_product_flash_attention_for_cpu.default' (node 'sdpa'): dropout_p != 0 needs the RNG and is not supported}}
  %0, %1 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %q, %q) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 1.000000e-01], name = "sdpa"} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  joint.output %0 : tensor<1x2x4x8xf32>
}

// -----

joint.graph @sdpa_heads_not_a_multiple(%q: tensor<1x3x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x3x4x8xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::_scaled_dot_product_flash_attention_for_cpu.default' (node 'sdpa'): query heads must be a static multiple of key/value heads}}
  %0, %1 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %k, %k) {name = "sdpa"} : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x3x4x8xf32>, tensor<1x3x4xf32>)
  joint.output %0 : tensor<1x3x4x8xf32>
}

// -----

joint.graph @nll_loss_class_weights(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %t: tensor<4xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::nll_loss_forward.default' (node 'nll'): class weights are not supported (weight must be None)}}
  %0, %1 = joint.call_function "aten::nll_loss_forward.default"(%x, %t, %w) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 1, -100], name = "nll"} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<f32>)
  joint.output %0 : tensor<f32>
}

// -----

joint.graph @embedding_backward_scale_by_freq(%g: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<4xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<10x8xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::embedding_dense_backward.default' (node 'ebw'): scale_grad_by_freq is not supported}}
  %0 = joint.call_function "aten::embedding_dense_backward.default"(%g, %i) {args = [#joint.operand<0>, #joint.operand<1>, 10, -1, true], name = "ebw"} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<10x8xf32>
  joint.output %0 : tensor<10x8xf32>
}

// -----

// A boolean mask index has a data-dependent result shape.
joint.graph @index_with_bool_mask(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %m: tensor<4xi1> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<?xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::index.Tensor' (node 'index'): boolean or non-integer index tensors are not supported}}
  %0 = joint.call_function "aten::index.Tensor"(%x, %m) {args = [#joint.operand<0>, [#joint.operand<1>]], name = "index"} : (tensor<4xf32>, tensor<4xi1>) -> tensor<?xf32>
  joint.output %0 : tensor<?xf32>
}

// -----

joint.graph @layer_norm_backward_unrequested_result_used(%dy: tensor<2x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %mean: tensor<2x1xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<8xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::native_layer_norm_backward.default' (node 'lnb'): result not in output_mask is used}}
  %0, %1, %2 = joint.call_function "aten::native_layer_norm_backward.default"(%dy, %dy, %mean, %mean, %w) {args = [#joint.operand<0>, #joint.operand<1>, [8], #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, unit, [true, false, false]], name = "lnb"} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>)
  joint.output %1 : tensor<8xf32>
}

// -----

joint.graph @addmm_integer(%c: tensor<3xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %a: tensor<2x4xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<4x3xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x3xi64> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::addmm.default' (node 'addmm'): addmm of a non-float dtype}}
  %0 = joint.call_function "aten::addmm.default"(%c, %a, %b) {name = "addmm"} : (tensor<3xi64>, tensor<2x4xi64>, tensor<4x3xi64>) -> tensor<2x3xi64>
  joint.output %0 : tensor<2x3xi64>
}

// -----

joint.graph @batch_norm_eval_without_stats(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::native_batch_norm.default' (node 'bn'): eval needs running statistics}}
  %0, %1, %2 = joint.call_function "aten::native_batch_norm.default"(%x) {args = [#joint.operand<0>, unit, unit, unit, unit, false, 1.000000e-01, 1.000000e-05], name = "bn"} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<0xf32>, tensor<0xf32>)
  joint.output %0 : tensor<4x3xf32>
}

// -----

joint.graph @batch_norm_vector_input(%x: tensor<3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::native_batch_norm.default' (node 'bn'): input must be [N, C, *]}}
  %0, %1, %2 = joint.call_function "aten::native_batch_norm.default"(%x) {args = [#joint.operand<0>, unit, unit, unit, unit, true, 1.000000e-01, 1.000000e-05], name = "bn"} : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  joint.output %0 : tensor<3xf32>
}

// -----

joint.graph @max_pool_unbatched_input(%x: tensor<2x5x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x2x2xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::max_pool2d_with_indices.default' (node 'mp'): expects static [N, C, H, W] input and output (3-d [C, H, W] and dynamic shapes are not lowered)}}
  %0:2 = joint.call_function "aten::max_pool2d_with_indices.default"(%x) {args = [#joint.operand<0>, [2, 2]], name = "mp"} : (tensor<2x5x5xf32>) -> (tensor<2x2x2xf32>, tensor<2x2x2xi64>)
  joint.output %0#0 : tensor<2x2x2xf32>
}

// -----

joint.graph @avg_pool_output_size_mismatch(%x: tensor<1x1x5x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x3x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::avg_pool2d.default' (node 'ap'): output size does not match kernel_size, stride, padding, dilation and ceil_mode}}
  %0 = joint.call_function "aten::avg_pool2d.default"(%x) {args = [#joint.operand<0>, [2, 2]], name = "ap"} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  joint.output %0 : tensor<1x1x3x3xf32>
}

// -----

joint.graph @adaptive_avg_pool_dynamic_input(%x: tensor<1x2x?x6xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x2x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::_adaptive_avg_pool2d.default' (node 'aap'): expects static [N, C, H, W] input and output (3-d [C, H, W] and dynamic shapes are not lowered)}}
  %0 = joint.call_function "aten::_adaptive_avg_pool2d.default"(%x) {args = [#joint.operand<0>, [2, 3]], name = "aap"} : (tensor<1x2x?x6xf32>) -> tensor<1x2x2x3xf32>
  joint.output %0 : tensor<1x2x2x3xf32>
}

// -----

// A volumetric input given to the 2-d nearest upsampling.
joint.graph @upsample_nearest2d_of_a_5d_input(%x: tensor<1x2x2x3x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x2x6x6xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::upsample_nearest2d.default' (node 'up'): expects static [N, C, H, W] input and output (other ranks, such as a volumetric [N, C, D, H, W] input, and dynamic shapes are not lowered)}}
  %0 = joint.call_function "aten::upsample_nearest2d.default"(%x) {args = [#joint.operand<0>, [6, 6]], name = "up"} : (tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x6x6xf32>
  joint.output %0 : tensor<1x2x2x6x6xf32>
}

// -----

// The 3-d nearest upsampling has no lowering.
joint.graph @upsample_nearest3d(%x: tensor<1x2x2x3x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x4x6x6xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::upsample_nearest3d.default' (node 'up3')}}
  %0 = joint.call_function "aten::upsample_nearest3d.default"(%x) {args = [#joint.operand<0>, [4, 6, 6]], name = "up3"} : (tensor<1x2x2x3x3xf32>) -> tensor<1x2x4x6x6xf32>
  joint.output %0 : tensor<1x2x4x6x6xf32>
}

// -----

joint.graph @group_norm_channels_not_a_multiple(%x: tensor<2x6x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x6x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::native_group_norm.default' (node 'gn'): C must be a multiple of group}}
  %0, %1, %2 = joint.call_function "aten::native_group_norm.default"(%x) {args = [#joint.operand<0>, unit, unit, 2, 6, 3, 4, 1.000000e-05], name = "gn"} : (tensor<2x6x3xf32>) -> (tensor<2x6x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  joint.output %0 : tensor<2x6x3xf32>
}

// -----

joint.graph @group_norm_dynamic(%x: tensor<?x4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<?x4x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::native_group_norm.default' (node 'gn'): expects a static [N, C, *] input (dynamic shapes are not lowered)}}
  %0, %1, %2 = joint.call_function "aten::native_group_norm.default"(%x) {args = [#joint.operand<0>, unit, unit, 2, 4, 3, 2, 1.000000e-05], name = "gn"} : (tensor<?x4x3xf32>) -> (tensor<?x4x3xf32>, tensor<?x2xf32>, tensor<?x2xf32>)
  joint.output %0 : tensor<?x4x3xf32>
}

// -----

// sort ranks the elements of a row: a 0-d tensor has none.
joint.graph @sort_scalar(%x: tensor<i64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<i64> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::sort.default' (node 'sort'): expects a float or integer tensor of rank >= 1}}
  %0, %1 = joint.call_function "aten::sort.default"(%x) {args = [#joint.operand<0>], name = "sort"} : (tensor<i64>) -> (tensor<i64>, tensor<i64>)
  joint.output %0 : tensor<i64>
}

// -----

joint.graph @scatter_reduce_unknown(%x: tensor<3x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<3x2xi64> {joint.role = #joint.role<input>, joint.path = "i"}) -> (tensor<3x4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::scatter_reduce.two' (node 'sr'): unknown reduce 'median'}}
  %0 = joint.call_function "aten::scatter_reduce.two"(%x, %i, %x) {args = [#joint.operand<0>, 1, #joint.operand<1>, #joint.operand<2>, "median"], name = "sr"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x4xf32>) -> tensor<3x4xf32>
  joint.output %0 : tensor<3x4xf32>
}

// -----

// Bool has no order for amax/amin nor a sum in torch's scatter_reduce.
joint.graph @scatter_reduce_bool(%x: tensor<3x4xi1> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<3x2xi64> {joint.role = #joint.role<input>, joint.path = "i"}, %s: tensor<3x2xi1> {joint.role = #joint.role<input>, joint.path = "s"}) -> (tensor<3x4xi1> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::scatter_reduce.two' (node 'sr'): expects float or signed integer tensors (not bool)}}
  %0 = joint.call_function "aten::scatter_reduce.two"(%x, %i, %s) {args = [#joint.operand<0>, 1, #joint.operand<1>, #joint.operand<2>, "sum"], name = "sr"} : (tensor<3x4xi1>, tensor<3x2xi64>, tensor<3x2xi1>) -> tensor<3x4xi1>
  joint.output %0 : tensor<3x4xi1>
}

// -----

joint.graph @upsample_bilinear_3d(%x: tensor<1x2x4x4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x8x8x8xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::upsample_bilinear2d.default' (node 'up'): expects static [N, C, H, W] input and output (other ranks, such as a volumetric [N, C, D, H, W] input, and dynamic shapes are not lowered)}}
  %0 = joint.call_function "aten::upsample_bilinear2d.default"(%x) {args = [#joint.operand<0>, [8, 8], false], name = "up"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x8x8x8xf32>
  joint.output %0 : tensor<1x2x8x8x8xf32>
}
