//===- SignatureTest.cpp - a layer function's roles, as the enum ----------===//
//
// dm.role attributes read and written through dmrt::TensorRole: the
// spellings round-trip, and a role the bundle does not know is an error that
// names it (not a silent default).
//
//===----------------------------------------------------------------------===//
#include "compiler/bundle/TensorTable.h"
#include "compiler/Driver.h"
#include "ir/Signature.h"

#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using dmrt::TensorRole;

namespace {

constexpr const char *kModule = R"mlir(
func.func @f(%x: !dm.tensor<[b=2, i=4], f32> {dm.name = "x", dm.role = "input"},
             %w: !dm.tensor<[i=4], f32> {dm.name = "w", dm.role = "weight"})
    -> (!dm.tensor<[b=2, i=4], f32> {dm.name = "y", dm.role = "output"}) {
  %y = dm.bias_add %x, %w : !dm.tensor<[b=2, i=4], f32>, !dm.tensor<[i=4], f32>
  return %y : !dm.tensor<[b=2, i=4], f32>
}
)mlir";

TEST(Signature, RolesReadAsTheEnumAndUnknownOnesAreErrors) {
  MLIRContext ctx;
  dmc::loadDmcDialects(ctx);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModule, &ctx);
  ASSERT_TRUE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  EXPECT_EQ(dmc::dm::argRole(f, 0), TensorRole::Input);
  EXPECT_FALSE(dmc::dm::argRole(f, 1).has_value());
  EXPECT_EQ(dmc::dm::argRoleText(f, 1), "weight");
  EXPECT_EQ(dmc::dm::resultRole(f, 0), TensorRole::Output);
  auto table = dmc::bundle::TensorTable::build(f);
  ASSERT_FALSE(static_cast<bool>(table));
  EXPECT_EQ(llvm::toString(table.takeError()),
            "@f: unknown dm.role \"weight\" (the bundle knows input, param, grad_output, "
            "output, grad)");

  // Written as the bundle's spellings, read back as the same roles.
  Type t = f.getArgument(0).getType();
  dmc::dm::addArgument(f, t, "dy", TensorRole::GradOutput);
  EXPECT_EQ(dmc::dm::argRoleText(f, 2), "grad_output");
  EXPECT_EQ(dmc::dm::argRole(f, 2), TensorRole::GradOutput);
  dmc::dm::setResults(f, {f.getArgument(0), f.getArgument(2)}, {"y", "x.grad"},
                      {TensorRole::Output, TensorRole::Grad});
  EXPECT_EQ(dmc::dm::resultRoleText(f, 1), "grad");
  EXPECT_EQ(dmc::dm::resultRole(f, 1), TensorRole::Grad);
}

} // namespace
