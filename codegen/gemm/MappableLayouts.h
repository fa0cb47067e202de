//===- MappableLayouts.h - every layout of a contraction cuBLASLt maps ----===//
//
// MLIR-free. The layouts of a contraction's three tensors that keep each
// letter group (batch, M, N, K as GemmMapping.h classifies them) adjacent,
// with one letter order per group shared by every tensor holding it, and
// the groups in any order; only those mapContraction accepts are returned.
// Group letter orders: as each tensor has them (a, b, d in turn), then, for
// groups of up to three letters, every other. dm-default-layouts prices
// these to fix an unmappable contraction; the tuner's layout candidates
// (compiler/bundle/LayoutCandidates.h) measure them.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_GEMM_MAPPABLELAYOUTS_H
#define DMC_CODEGEN_GEMM_MAPPABLELAYOUTS_H

#include "codegen/gemm/GemmMapping.h"

#include <string>
#include <vector>

namespace dmcgen {

/// Dimension letters of a, b and d, outermost first.
struct LayoutTriple {
  std::string a, b, d;
  bool operator==(const LayoutTriple &o) const { return a == o.a && b == o.b && d == o.d; }
};

/// Every mappable layout triple of `c` (its epilogue, scale and bias letters
/// kept; its layouts give the letters, extents and the preferred orders), in
/// a fixed order: group letter orders outermost (the tensors' own first),
/// then the group order of a, of b, of d (each tensor's own first). `c`'s own
/// layouts are among them when they map.
std::vector<LayoutTriple> enumerateMappable(const Contraction &c);

} // namespace dmcgen

#endif // DMC_CODEGEN_GEMM_MAPPABLELAYOUTS_H
