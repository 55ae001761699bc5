//===- Reduction.cpp - Lower Reduction ops to linalg ------------*- C++ -*-===//
//
// The Reduction family of convert-joint-to-linalg: reductions, softmax and
// nll_loss. Owned by the lower-ops work of issue 12; until its patterns land
// the family adds nothing, so its targets fail with the driver's "no lowering"
// diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::populateReductionPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target) {}
