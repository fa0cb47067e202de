//===- dmc-opt.cpp - mlir-opt with the dm dialect and passes --------------===//
#include "passes/Passes.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<dmc::dm::DmDialect, mlir::func::FuncDialect>();
  dmc::registerDmPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "dmc-opt: dm passes\n", registry));
}
