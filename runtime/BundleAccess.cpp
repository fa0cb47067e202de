//===- BundleAccess.cpp - Lookups and names of a loaded bundle ------------===//
//
// The parts of runtime/Bundle.h that do not parse: tensor/kernel/contraction
// lookup, alias resolution, dtype and epilogue names. The manifest reader is
// in Bundle.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/Bundle.h"

#include <algorithm>
#include <cctype>

namespace dmrt {

int64_t BundleTensor::numElements() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<int64_t> BundleContraction::inputs() const {
  std::vector<int64_t> v{a, b};
  if (bias >= 0 && dmcgen::epilogueReadsBias(epilogue))
    v.push_back(bias);
  if (beta != 0)
    v.push_back(d);
  return v;
}

std::vector<int64_t> BundleContraction::outputs() const {
  std::vector<int64_t> v{d};
  if (bias >= 0 && dmcgen::epilogueWritesBias(epilogue))
    v.push_back(bias);
  return v;
}

const BundleTensor *Bundle::tensor(int64_t id) const {
  auto it = tensorIndex_.find(id);
  return it == tensorIndex_.end() ? nullptr : &tensors[it->second];
}
const BundleKernel *Bundle::kernel(int64_t id) const {
  auto it = kernelIndex_.find(id);
  return it == kernelIndex_.end() ? nullptr : &kernels[it->second];
}
const BundleKernel *Bundle::kernelByName(const std::string &name) const {
  for (const auto &k : kernels)
    if (k.name == name || k.entry == name)
      return &k;
  return nullptr;
}
const BundleContraction *Bundle::contraction(int64_t id) const {
  auto it = contractionIndex_.find(id);
  return it == contractionIndex_.end() ? nullptr : &contractions[it->second];
}
int64_t Bundle::baseOf(int64_t id, int64_t &elementOffset) const {
  elementOffset = 0;
  const BundleTensor *t = tensor(id);
  // Validation guarantees the chain ends; the bound is a safety net.
  for (size_t hops = 0; t && t->isAlias && hops <= tensors.size(); ++hops) {
    elementOffset += t->aliasOffset;
    t = tensor(t->aliasOf);
  }
  return t ? t->id : -1;
}
std::string Bundle::path(const std::string &rel) const {
  return dir.empty() ? rel : dir + "/" + rel;
}

bool parseBundleDType(const std::string &s, DType &out) {
  if (s == "bf16") out = DType::BF16;
  else if (s == "f16") out = DType::F16;
  else if (s == "f32") out = DType::F32;
  else if (s == "i32") out = DType::I32;
  else return false;
  return true;
}

const char *bundleDTypeName(DType t) {
  switch (t) {
  case DType::BF16: return "bf16";
  case DType::F16: return "f16";
  case DType::F32: return "f32";
  case DType::I32: return "i32";
  default: return dtypeName(t);
  }
}

bool parseEpilogue(const std::string &s, dmcgen::Epilogue &out) {
  if (s == "none" || s == "default") {
    out = dmcgen::Epilogue::None;
    return true;
  }
  for (int i = 0; i <= static_cast<int>(dmcgen::Epilogue::BGradB); ++i) {
    auto e = static_cast<dmcgen::Epilogue>(i);
    std::string n = dmcgen::epilogueName(e);
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (n == s) {
      out = e;
      return true;
    }
  }
  return false;
}

} // namespace dmrt
