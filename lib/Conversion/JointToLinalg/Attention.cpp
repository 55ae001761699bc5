//===- Attention.cpp - Lower Attention ops to linalg ------------*- C++ -*-===//
//
// The Attention family of convert-joint-to-linalg: scaled dot product
// attention. Owned by the lower-ops work of issue 12; until its patterns land
// the family adds nothing, so its targets fail with the driver's "no lowering"
// diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::populateAttentionPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target) {}
