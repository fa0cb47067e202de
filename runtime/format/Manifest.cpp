//===- Manifest.cpp - Lookups in a manifest ------------------------------===//
//
// Tensor/kernel/contraction lookup and alias resolution. The reader is
// ManifestReader.cpp, the writer ManifestWriter.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/format/Manifest.h"

namespace dmrt {

std::string shapeString(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t n = 0; n < s.size(); ++n)
    out += (n ? ", " : "") + std::to_string(s[n]);
  return out + "]";
}

int64_t BundleTensor::numElements() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

int64_t BundleTensor::spanElements() const {
  if (aliasStrides.empty() || aliasStrides.size() != shape.size())
    return numElements();
  int64_t last = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0)
      return 0;
    last += (shape[d] - 1) * aliasStrides[d];
  }
  return last + 1;
}

std::vector<int64_t> BundleContraction::inputs() const {
  std::vector<int64_t> v{a, b};
  if (bias >= 0 && (epilogueReadsBias(epilogue) || epilogueReadsAddend(epilogue)))
    v.push_back(bias);
  if (beta != 0)
    v.push_back(d);
  return v;
}

std::vector<int64_t> BundleContraction::outputs() const {
  std::vector<int64_t> v{d};
  if (bias >= 0 && epilogueWritesBias(epilogue))
    v.push_back(bias);
  return v;
}

const BundleTensor *Manifest::tensor(int64_t id) const {
  auto it = tensorIndex_.find(id);
  return it == tensorIndex_.end() ? nullptr : &tensors[it->second];
}
const BundleKernel *Manifest::kernel(int64_t id) const {
  auto it = kernelIndex_.find(id);
  return it == kernelIndex_.end() ? nullptr : &kernels[it->second];
}
const BundleKernel *Manifest::kernelByName(const std::string &name) const {
  for (const auto &k : kernels)
    if (k.name == name || k.entry == name)
      return &k;
  return nullptr;
}
const BundleContraction *Manifest::contraction(int64_t id) const {
  auto it = contractionIndex_.find(id);
  return it == contractionIndex_.end() ? nullptr : &contractions[it->second];
}
int64_t Manifest::baseOf(int64_t id, int64_t &elementOffset) const {
  elementOffset = 0;
  const BundleTensor *t = tensor(id);
  // Validation guarantees the chain ends; the bound is a safety net.
  for (size_t hops = 0; t && t->isAlias && hops <= tensors.size(); ++hops) {
    elementOffset += t->aliasOffset;
    t = tensor(t->aliasOf);
  }
  return t ? t->id : -1;
}
void Manifest::reindex() {
  tensorIndex_.clear();
  kernelIndex_.clear();
  contractionIndex_.clear();
  for (size_t i = 0; i < tensors.size(); ++i)
    tensorIndex_[tensors[i].id] = i;
  for (size_t i = 0; i < kernels.size(); ++i)
    kernelIndex_[kernels[i].id] = i;
  for (size_t i = 0; i < contractions.size(); ++i)
    contractionIndex_[contractions[i].id] = i;
}

} // namespace dmrt
