//===- Normalization.cpp - Lower Normalization ops to linalg ----*- C++ -*-===//
//
// The Normalization family of convert-joint-to-linalg: layer norm forward and
// backward. Owned by the lower-ops work of issue 12; until its patterns land
// the family adds nothing, so its targets fail with the driver's "no lowering"
// diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::populateNormalizationPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target) {}
