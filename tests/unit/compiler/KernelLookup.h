//===- KernelLookup.h - a dm.kernel of a test's module by name ------------===//
#ifndef DMC_TESTS_KERNELLOOKUP_H
#define DMC_TESTS_KERNELLOOKUP_H

#include "compiler/Driver.h"
#include "ir/DmDialect.h"

#include <gtest/gtest.h>

namespace dmc::test {

/// The first dm.kernel called `name` in `module`'s layer function; a test
/// failure and a null op when there is none.
inline dm::KernelOp kernelNamed(mlir::ModuleOp module, llvm::StringRef name) {
  for (auto k : layerFunction(module).getOps<dm::KernelOp>())
    if (k.getName() == name)
      return k;
  ADD_FAILURE() << "no kernel " << name.str();
  return {};
}

} // namespace dmc::test

#endif // DMC_TESTS_KERNELLOOKUP_H
