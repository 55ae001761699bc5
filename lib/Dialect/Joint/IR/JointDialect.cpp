//===- JointDialect.cpp - The joint dialect ---------------------*- C++ -*-===//
//
// Registers the joint dialect's operations and attributes.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/IR/JointOps.h"

using namespace mlir;
using namespace mlir::joint;

#include "joint/Dialect/Joint/IR/JointDialect.cpp.inc"

void JointDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "joint/Dialect/Joint/IR/JointOps.cpp.inc"
      >();
  registerAttributes();
}
