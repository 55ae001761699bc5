//===- joint-translate.cpp - joint-graph JSON <-> MLIR ----------*- C++ -*-===//
//
// mlir-translate for joint graphs: --import-joint-json reads format v1
// (plain or gzip) into the joint dialect, --export-joint-json writes it back.
//
//===----------------------------------------------------------------------===//

#include "joint/Target/JSON/Export.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::joint::registerImportJointJSONTranslation();
  mlir::joint::registerExportJointJSONTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "joint-mlir translation driver"));
}
