//===- LibraryCalls.h - GEMMs through the cuBLAS shim -----------*- C++ -*-===//
//
// The rewrite patterns behind `joint-gpu-library-calls`, which turn the
// GEMMs of a bufferized step that cuBLAS supports into calls to the
// runtime's shim (LibraryCalls.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_LOWERTOCUDA_LIBRARYCALLS_H
#define JOINT_CONVERSION_LOWERTOCUDA_LIBRARYCALLS_H

namespace mlir {
class RewritePatternSet;
namespace joint {

/// Adds the pattern that replaces each `linalg.matmul` / `linalg.batch_matmul`
/// in the top-level block of a func.func that cuBLAS supports by a call to
/// `joint_cublas_gemm` / `joint_cublas_gemm_strided_batched`.
void populateGemmToCublasCallPatterns(RewritePatternSet &patterns);

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_LOWERTOCUDA_LIBRARYCALLS_H
