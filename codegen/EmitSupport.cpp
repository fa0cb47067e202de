//===- EmitSupport.cpp - pieces shared by the kernel emitters -------------===//
#include "codegen/EmitSupport.h"

#include "runtime/format/KernelAbi.h"

#include <cctype>

using namespace mlir;

namespace dmc::codegen {

std::string elementType(Type t) {
  dmrt::DType s = storageOf(t);
  return s == dmrt::DType::F32 ? "float" : s == dmrt::DType::I32 ? "int" : "uint16_t";
}

std::string pointerType(Type t, bool input) {
  return (input ? "const " : "") + elementType(t) + " *__restrict__";
}

std::string storeCall(Type t, const std::string &ptr, const std::string &off,
                      const std::string &v) {
  dmrt::DType s = storageOf(t);
  std::string fn = s == dmrt::DType::BF16  ? "dmcStoreBf16"
                   : s == dmrt::DType::F16 ? "dmcStoreHalf"
                                           : "dmcStore";
  return fn + "(" + ptr + ", " + off + ", " + v + ");";
}

std::string shapeOf(Type t) {
  auto tt = cast<dm::TensorType>(t);
  std::string s;
  for (unsigned n = 0; n < tt.getRank(); ++n)
    s += (n ? " " : "") + std::string(1, tt.getNames()[n]) + "=" +
         std::to_string(tt.getShape()[n]);
  return s + " " + dmrt::dtypeName(storageOf(t));
}

std::string offsetExpr(Type t, llvm::StringRef dims, char chunkDim) {
  auto tt = cast<dm::TensorType>(t);
  std::string e = "0";
  for (char c : dims)
    if (tt.hasDim(c)) {
      int64_t stride = 1;
      for (unsigned n = tt.indexOf(c) + 1; n < tt.getRank(); ++n)
        stride *= tt.getShape()[n];
      e += std::string(c == chunkDim ? " + first_" : " + i_") + c + " * " + std::to_string(stride);
    }
  return e;
}

int64_t linearStride(Type t, llvm::StringRef order, const KernelSpace &s) {
  auto tt = cast<dm::TensorType>(t);
  auto strideOf = [&](char c) {
    int64_t stride = 1;
    for (unsigned n = tt.indexOf(c) + 1; n < tt.getRank(); ++n)
      stride *= tt.getShape()[n];
    return stride;
  };
  if (order.empty() || llvm::any_of(order, [&](char c) { return !tt.hasDim(c); }))
    return -1;
  int64_t span = strideOf(order.back()) * s.sizes.at(order.back());
  for (size_t n = order.size() - 1; n-- > 0;) {
    if (strideOf(order[n]) != span)
      return -1;
    span *= s.sizes.at(order[n]);
  }
  return strideOf(order.back());
}

void decode(llvm::raw_ostream &os, const std::string &indent, const std::string &var,
            llvm::StringRef order, const KernelSpace &s) {
  os << indent << "Idx t_" << var << " = " << var << ";\n";
  for (size_t n = order.size(); n-- > 0;) {
    int64_t size = s.sizes.at(order[n]);
    os << indent << "const Idx i_" << order[n] << " = t_" << var << " % " << size << ";\n";
    if (n)
      os << indent << "t_" << var << " /= " << size << ";\n";
  }
}

std::string counterIndex(const Draw &d, const KernelSpace &s, char vd) {
  std::string e = "0ull";
  for (char c : d.order)
    e = "(" + e + ") * " + std::to_string(s.sizes.at(c)) + "ull + (unsigned long long)" +
        (c == vd ? "first_" : "i_") + std::string(1, c);
  return e;
}

namespace {
/// The element offset of the keep-bits word holding key `keyIndex` (an
/// expression) at the point's other indices, dims in `skip` left out.
std::string bitsWord(const Draw &d, const std::string &keyIndex, llvm::StringRef skip = "") {
  std::string e = "(Idx)0";
  int64_t stride = 1;
  for (size_t n = d.bitsDims.size(); n-- > 0;) {
    char c = d.bitsDims[n];
    std::string index = c == d.word ? "((" + keyIndex + ") >> 5)" : "i_" + std::string(1, c);
    if (!skip.contains(c))
      e += " + (Idx)" + index + " * " + std::to_string(stride);
    stride *= d.bitsShape[n];
  }
  return e;
}

/// Stores the keep byte of the group whose words are `words` and whose
/// first key is `keyIndex` into the draw's output.
std::string storeKeepByte(const Draw &d, const std::string &keyIndex, const std::string &words) {
  // Byte b of a little-endian word holds its keys 8 b .. 8 b + 7.
  std::string byte = "4 * (" + bitsWord(d, keyIndex) + ") + (((" + keyIndex + ") & 31) >> 3)";
  return "reinterpret_cast<unsigned char *>(out" + std::to_string(d.bitsOutput) + ")[" + byte +
         "] = (unsigned char)dmrt::dropoutKeepByte(" + words + ", " +
         std::to_string(d.threshold) + "u);";
}

/// The keep-bits word of input `d.bitsInput` holding key `keyIndex`.
std::string loadBitsWord(const Draw &d, const std::string &keyIndex) {
  return "(uint32_t)in" + std::to_string(d.bitsInput) + "[" + bitsWord(d, keyIndex) + "]";
}
} // namespace

std::string loadBitsWordOfRow(const Draw &d, const std::string &keyIndex, llvm::StringRef rowDims,
                              const std::string &row, int64_t rowStride) {
  if (row.empty())
    return loadBitsWord(d, keyIndex);
  return "(uint32_t)in" + std::to_string(d.bitsInput) + "[(Idx)(" + row + ") * " +
         std::to_string(rowStride) + " + " + bitsWord(d, keyIndex, rowDims) + "]";
}

void emitVectorDraws(llvm::raw_ostream &os, const std::string &indent, const std::set<int> &used,
                     const NodeGraph &g, const KernelSpace &s, char vd, int vec,
                     const std::map<int, std::string> &fetchedBits) {
  for (auto [k, d] : llvm::enumerate(g.draws)) {
    std::string w = NodeGraph::wordName(k);
    if (!used.count(int(k)) || d.key() != vd)
      continue;
    std::string first = "first_" + std::string(1, vd);
    if (d.bitsInput >= 0) {
      // A vector of a power of two at most 32 lies in one word.
      auto fetched = fetchedBits.find(int(k));
      if (vec > 1)
        os << indent << "const uint32_t bw" << w << " = "
           << (fetched != fetchedBits.end() ? fetched->second : loadBitsWord(d, first))
           << ";  // dropout keep bits\n"
           << indent << "const unsigned bs" << w << " = (unsigned)(" << first << " & 31);\n";
      continue;
    }
    if (vec % 4)
      continue;
    // The vector's first element is a multiple of 4 in the op's order (its
    // last dim is the vector dim): with vec 4, half of a group of 8.
    int groups = (vec + 7) / 8;
    os << indent << "const unsigned long long n" << w << " = " << counterIndex(d, s, vd)
       << ";  // dropout " << d.opId << ": one Philox call per 8 elements\n"
       << indent << "uint32_t wv" << w << "[" << 4 * groups << "];\n"
       << indent << "#pragma unroll\n"
       << indent << "for (int q = 0; q < " << groups << "; ++q)\n"
       << indent << "  dmrt::dropoutWords(seed, " << d.opId << "u, (n" << w << " >> 3) + q, wv" << w
       << " + 4 * q);\n";
    if (d.bitsOutput < 0)
      continue;
    // The keep bytes of the vector's groups (with vec 4, the group's first half writes).
    if (vec % 8)
      os << indent << "if ((" << first << " & 7) == 0) "
         << storeKeepByte(d, first, "wv" + w) << "\n";
    else
      for (int q = 0; q < groups; ++q)
        os << indent
           << storeKeepByte(d, first + " + " + std::to_string(8 * q), "wv" + w + " + " +
                                                                           std::to_string(4 * q))
           << "\n";
  }
}

void emitWords(llvm::raw_ostream &os, const std::string &indent, const std::set<int> &used,
               const NodeGraph &g, const KernelSpace &s, char vd, int vec) {
  for (auto [k, d] : llvm::enumerate(g.draws)) {
    std::string w = NodeGraph::wordName(k);
    if (!used.count(int(k)))
      continue;
    std::string key = "i_" + std::string(1, d.key());
    if (d.bitsInput >= 0) {
      if (vd && d.key() == vd && vec > 1)
        os << indent << "const uint32_t " << w << " = (bw" << w << " >> (bs" << w
           << " + (unsigned)v)) & 1u;\n";
      else
        os << indent << "const uint32_t " << w << " = (" << loadBitsWord(d, key) << " >> (" << key
           << " & 31)) & 1u;\n";
      continue;
    }
    if (vd && d.key() == vd && vec % 4 == 0) {
      // Element v is half (n & 7) + v of the vector's groups.
      std::string j = vec % 8 == 0 ? std::string("(unsigned)v")
                                   : "(unsigned)(n" + w + " & 7ull) + (unsigned)v";
      os << indent << "const uint32_t " << w << " = dmrt::dropoutHalf(wv" << w << " + 4 * ((" << j
         << ") >> 3), (" << j << ") & 7u);\n";
      continue;
    }
    if (d.bitsOutput < 0) {
      os << indent << "const uint32_t " << w << " = dmrt::dropoutWord(seed, " << d.opId << "u, "
         << counterIndex(d, s, 0) << ");\n";
      continue;
    }
    // One Philox call gives the point's draw and, at the group's first
    // element, the group's keep byte.
    os << indent << "const unsigned long long n" << w << " = " << counterIndex(d, s, 0) << ";\n"
       << indent << "uint32_t g" << w << "[4];\n"
       << indent << "dmrt::dropoutWords(seed, " << d.opId << "u, n" << w << " >> 3, g" << w
       << ");\n"
       << indent << "const uint32_t " << w << " = dmrt::dropoutHalf(g" << w << ", (unsigned)(n"
       << w << " & 7ull));\n"
       << indent << "if ((" << key << " & 7) == 0) " << storeKeepByte(d, key, "g" + w) << "\n";
  }
}

namespace {
/// The prelude's suffix for vector loads and stores of `t`'s storage.
std::string vectorSuffix(Type t) {
  switch (storageOf(t)) {
  case dmrt::DType::BF16: return "Bf16";
  case dmrt::DType::F16: return "Half";
  case dmrt::DType::I32: return "I32";
  default: return "";
  }
}
} // namespace

std::string loadGuard(const NodeGraph &g, unsigned n, char vd) {
  std::optional<LoadGuard> guard = g.guardOf(n);
  return guard && guard->dim != vd ? guard->text() : std::string();
}

std::string vectorLoad(Type t, unsigned n, int vec, const std::string &address,
                       const NodeGraph &g, char vd) {
  std::string v = "vin" + std::to_string(n), guard = loadGuard(g, n, vd);
  std::string load = "dmcLoadVec" + vectorSuffix(t) + "(" + v + ", " + address + ");";
  if (!guard.empty()) // the select reads vin only where the guard holds
    load = "if (" + guard + ") " + load;
  return "float " + v + "[" + std::to_string(vec) + "];  " + load + "\n";
}

std::string vectorConvert(Type t, unsigned n, int vec, const std::string &raw,
                          const std::string &guard, const std::string &into) {
  std::string v = into.empty() ? "vin" + std::to_string(n) : into;
  return "float " + v + "[" + std::to_string(vec) + "];  " +
         (guard.empty() ? "" : "if (" + guard + ") ") + "dmcConvertVec" + vectorSuffix(t) + "(" +
         v + ", " + raw + ");\n";
}

std::string vectorStore(Type t, unsigned n, const std::string &address) {
  return "dmcStoreVec" + vectorSuffix(t) + "(" + address + ", vout" + std::to_string(n) + ");\n";
}

std::string loadOf(dm::KernelOp kernel, unsigned n,
                   llvm::function_ref<bool(Type)> vectorized) {
  Type t = kernel.getInputs()[n].getType();
  std::string k = std::to_string(n);
  if (vectorized(t))
    return "vin" + k + "[v]";
  std::string p = "in" + k, o = "off_in" + k;
  switch (storageOf(t)) {
  case dmrt::DType::BF16:
    return "dmcLoadBf16(" + p + ", " + o + ")";
  case dmrt::DType::F16:
    return "dmcLoadHalf(" + p + ", " + o + ")";
  case dmrt::DType::I32:
    return "((float)" + p + "[" + o + "])";
  default:
    return "dmcLoad(" + p + ", " + o + ")";
  }
}

std::string nodeValue(const NodeGraph &g, size_t id, dm::KernelOp kernel,
                      llvm::function_ref<bool(Type)> vectorized) {
  return g.value(id, [&](unsigned n) { return loadOf(kernel, n, vectorized); });
}

bool readsInput(const NodeGraph &g, unsigned n, llvm::function_ref<bool(size_t)> inSweep) {
  for (size_t id = 0; id < g.nodes.size(); ++id)
    if (inSweep(id) && llvm::is_contained(g.nodes[id].loads, n))
      return true;
  return false;
}

void emitSignature(llvm::raw_ostream &os, dm::KernelOp kernel, int threads,
                   llvm::StringRef entry, bool workspace, int minBlocks) {
  os << "extern \"C\" __global__ void __launch_bounds__(" << threads;
  if (minBlocks > 1)
    os << ", " << minBlocks;
  os << ")\n" << entry << "(";
  auto inputs = kernel.getInputs().getTypes();
  auto outputs = kernel.getResultTypes();
  for (dmrt::KernelParam p : dmrt::kernelParameters(inputs.size(), outputs.size(), workspace)) {
    os << "\n    ";
    switch (p.kind) {
    case dmrt::KernelParamKind::Input:
      os << pointerType(inputs[p.index], true) << " in" << p.index << ",  // "
         << shapeOf(inputs[p.index]);
      break;
    case dmrt::KernelParamKind::Output:
      os << pointerType(outputs[p.index], false) << " out" << p.index << ",  // "
         << shapeOf(outputs[p.index]);
      break;
    case dmrt::KernelParamKind::Workspace:
      os << "void *__restrict__ workspace,  // zeroed before the first launch; left zeroed";
      break;
    case dmrt::KernelParamKind::Seed:
      os << "unsigned long long seed) {\n";
      break;
    }
  }
}

void emitIndexType(llvm::raw_ostream &os, dm::KernelOp kernel, int64_t points) {
  int64_t largest = points;
  for (Type t : kernel.getInputs().getTypes())
    largest = std::max(largest, cast<dm::TensorType>(t).getNumElements());
  for (Type t : kernel.getResultTypes())
    largest = std::max(largest, cast<dm::TensorType>(t).getNumElements());
  os << "  typedef " << (largest < (int64_t(1) << 31) ? "int" : "long long") << " Idx;\n";
}

} // namespace dmc::codegen
