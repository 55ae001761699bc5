//===- TensorConstructors.cpp - arange and fills to linalg ------*- C++ -*-===//
//-*-===//
//
// The TensorConstructors family of convert-joint-to-linalg: arange and fills.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::populateTensorConstructorsPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target) {}
