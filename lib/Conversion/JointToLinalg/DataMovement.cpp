//===- DataMovement.cpp - Lower DataMovement ops to linalg ------*- C++ -*-===//
//
// The DataMovement family of convert-joint-to-linalg: views, cat, pad,
// slice_backward, split, clone and copies.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::populateDataMovementPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target) {}
