//===- SymInt.cpp - Lower SymInt ops to linalg ------------------*- C++ -*-===//
//
// The SymInt family of convert-joint-to-linalg: sym_size, sym_numel and SymInt
// arithmetic.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

using namespace mlir;
using namespace mlir::joint;

void mlir::joint::populateSymIntPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target) {}
