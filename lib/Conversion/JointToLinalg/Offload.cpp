//===- Offload.cpp - Lower Offload ops to linalg ----------------*- C++ -*-===//
//
// The Offload family of convert-joint-to-linalg: ao.offload, ao.reload and
// ao.wait_tensor as host copies.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::populateOffloadPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target) {}
