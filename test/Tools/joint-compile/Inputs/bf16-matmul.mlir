// bf16 matmul accumulated in f32 (as lower-ops emits it), truncated once.
func.func @step(%a: tensor<16x64xbf16>, %b: tensor<64x32xbf16>) -> tensor<16x32xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x64xbf16>, tensor<64x32xbf16>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<16x32xbf16>
  %t = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%m : tensor<16x32xf32>) outs(%e2 : tensor<16x32xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %y = arith.truncf %x : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<16x32xbf16>
  return %t : tensor<16x32xbf16>
}
