//===- joint-opt.cpp - The joint-mlir optimizer driver ----------*- C++ -*-===//
//
// mlir-opt for joint graphs: parses joint/ao IR, runs the registered passes
// and prints the result.
//
//===----------------------------------------------------------------------===//

#include "joint/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::joint::registerAllDialects(registry);
  mlir::joint::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "joint-mlir optimizer driver\n", registry));
}
