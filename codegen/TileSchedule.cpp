//===- TileSchedule.cpp - a tiled elementwise kernel's phases, as data ----===//
#include "codegen/TileSchedule.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace dmc::codegen {

TileSchedule scheduleTiledKernel(dm::KernelOp kernel, const KernelSpace &s, const NodeGraph &g,
                                 const KernelConfig &config) {
  TileSchedule t;
  t.a = config.laneDim;
  t.b = tiledWriteDim(s);
  t.vec = config.vec;
  t.tile = 32 * t.vec;
  for (char c : s.outer)
    if (c != t.a && c != t.b)
      t.others.push_back(c);
  t.tilesA = s.sizes.at(t.a) / t.tile;
  t.tilesB = s.sizes.at(t.b) / t.tile;
  t.blocks = s.outerPoints / (int64_t(t.tile) * t.tile);
  t.staged = tiledInputs(s, t.a);
  for (auto [n, v] : llvm::enumerate(kernel.getInputs())) {
    Type type = v.getType();
    bool staged = llvm::any_of(t.staged, [&](unsigned m) {
      return kernel.getInputs()[m].getType() == type; // loadOf asks by type
    });
    TileRead read = TileRead::Scalar;
    if (!readsInput(g, unsigned(n), [](size_t) { return true; }))
      read = TileRead::None;
    else if (staged)
      read = TileRead::Staged;
    else if (t.vec > 1 && cast<dm::TensorType>(type).getNames().back() == t.b)
      read = TileRead::Vector;
    t.reads.push_back(read);
  }
  return t;
}

} // namespace dmc::codegen
