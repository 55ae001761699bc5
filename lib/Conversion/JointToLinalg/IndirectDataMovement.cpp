//===- IndirectDataMovement.cpp - Gathers and scatters ----------*- C++ -*-===//
//------------*- C++ -*-===//
//
// The IndirectDataMovement family of convert-joint-to-linalg: embedding,
// embedding_dense_backward and index.Tensor. Owned by the lower-ops work of
// issue 12; until its patterns land the family adds nothing, so its targets
// fail with the driver's "no lowering" diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::populateIndirectDataMovementPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target) {}
