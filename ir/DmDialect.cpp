//===- DmDialect.cpp - dialect registration -------------------------------===//
#include "ir/DmDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dmc::dm;

#include "ir/DmDialect.cpp.inc"

void DmDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ir/DmTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/DmOps.cpp.inc"
      >();
}

#include "ir/DmInterfaces.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "ir/DmTypes.cpp.inc"

#define GET_OP_CLASSES
#include "ir/DmOps.cpp.inc"
