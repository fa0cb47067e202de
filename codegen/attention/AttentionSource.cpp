//===- AttentionSource.cpp - The NVRTC translation unit of one kernel -----===//
//
// The emitted source is a config struct of constants and a one-line entry;
// the kernels themselves are templates in codegen/attention/device/.
//
//===----------------------------------------------------------------------===//

#include "codegen/attention/AttentionProblem.h"

#include "runtime/format/device/Philox.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace dmcgen {

namespace {

/// A float literal that NVRTC reads back bit for bit (hexadecimal).
std::string floatLiteral(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af", (double)v);
  return buf;
}

class ConfigWriter {
public:
  explicit ConfigWriter(std::ostringstream &os) : os_(os) {}
  void flag(const char *name, bool v) {
    os_ << "  static constexpr bool " << name << " = " << (v ? "true" : "false") << ";\n";
  }
  void integer(const char *name, int64_t v) {
    os_ << "  static constexpr int " << name << " = " << v << ";\n";
  }
  void stride(const char *name, int64_t v) {
    os_ << "  static constexpr int64_t " << name << " = " << v << "ll;\n";
  }
  void word(const char *name, uint32_t v) {
    os_ << "  static constexpr uint32_t " << name << " = " << v << "u;\n";
  }
  void real(const char *name, float v, const std::string &comment) {
    os_ << "  static constexpr float " << name << " = " << floatLiteral(v) << "; // "
        << comment << "\n";
  }
  void tensor(const char *prefix, const char *rowDim, const AttentionStrides &s) {
    std::string p = prefix;
    stride(("k" + p + "b").c_str(), s.b);
    stride(("k" + p + "h").c_str(), s.h);
    stride(("k" + p + rowDim).c_str(), s.row);
  }

private:
  std::ostringstream &os_;
};

const char *deviceHeaderFor(AttentionKernelKind kind) {
  switch (kind) {
  case AttentionKernelKind::Forward: return "codegen/attention/device/Forward.h";
  case AttentionKernelKind::GradKV: return "codegen/attention/device/GradKV.h";
  case AttentionKernelKind::GradQ: return "codegen/attention/device/GradQ.h";
  }
  return "";
}

/// Consecutive keys have consecutive dropout indices, so lanes can share
/// Philox groups along runs of keys (device/Masking.h).
bool dropoutKeyRuns(const DropoutStrides &s) { return s.k == 1; }

} // namespace

const std::vector<std::string> &attentionDeviceHeaders() {
  static const std::vector<std::string> headers = {
      "codegen/attention/device/Mma.h",     "codegen/attention/device/Tile.h",
      "codegen/attention/device/Wgmma.h",
      "codegen/attention/device/Masking.h", "codegen/attention/device/Store.h",
      "codegen/attention/device/Forward.h", "codegen/attention/device/GradQ.h",
      "codegen/attention/device/GradKV.h"};
  return headers;
}

std::string emitAttentionSource(const AttentionProblem &p, const AttentionTiles &tiles,
                                AttentionKernelKind kind, const std::string &entryName) {
  std::ostringstream os;
  const bool bf16 = p.dtype == dmrt::DType::BF16;
  os << "// Fused attention, " << kernelKindName(kind) << " kernel (dmc codegen/attention).\n"
     << "#include \"runtime/format/device/Types.h\"\n"
     << "#include \"runtime/format/device/Philox.h\"\n"
     << "#include \"runtime/format/device/Float16.h\"\n"
     << "#include \"" << deviceHeaderFor(kind) << "\"\n\n"
     << "struct AttentionConfig {\n";
  ConfigWriter w(os);
  w.flag("kBf16", bf16);
  w.integer("kD", p.D);
  w.integer("kBlockM", tiles.blockM);
  w.integer("kBlockN", tiles.blockN);
  w.integer("kWarps", tiles.warps);
  w.flag("kWgmma", tiles.wgmma);
  w.flag("kCausal", p.causal);
  w.flag("kKeyPadding", p.keyPadding);
  w.flag("kDropout", p.dropout > 0);
  w.flag("kDropoutKeyRuns", p.dropout > 0 && dropoutKeyRuns(p.dropoutStrides));
  w.integer("kB", p.B);
  w.integer("kH", p.H);
  w.integer("kLq", p.Lq);
  w.integer("kLk", p.Lk);
  w.tensor("Q", "j", p.q);
  w.tensor("K", "k", p.k);
  w.tensor("V", "k", p.v);
  w.tensor("O", "j", p.o);
  w.tensor("DO", "j", p.dO);
  w.tensor("DQ", "j", p.dQ);
  w.tensor("DK", "k", p.dK);
  w.tensor("DV", "k", p.dV);
  w.stride("kLseB", p.lse.b);
  w.stride("kLseH", p.lse.h);
  w.stride("kLseJ", p.lse.j);
  w.stride("kDrowB", p.drow.b);
  w.stride("kDrowH", p.drow.h);
  w.stride("kDrowJ", p.drow.j);
  const bool drop = p.dropout > 0;
  w.stride("kDropB", drop ? p.dropoutStrides.b : 0);
  w.stride("kDropH", drop ? p.dropoutStrides.h : 0);
  w.stride("kDropJ", drop ? p.dropoutStrides.j : 0);
  w.stride("kDropK", drop ? p.dropoutStrides.k : 0);
  // Saved keep bits (int32 words over b, h, j, w): the forward writes them,
  // the backward kernels read them instead of drawing Philox words.
  const bool keep = usesKeepBits(p);
  w.flag("kKeepBits", keep);
  w.stride("kBitsB", keep ? p.bits.b : 0);
  w.stride("kBitsH", keep ? p.bits.h : 0);
  w.stride("kBitsJ", keep ? p.bits.j : 0);
  w.stride("kBitsW", keep ? p.bits.w : 0);
  w.integer("kBitsWords", keepBitsWords(p));
  w.word("kDropoutId", p.dropoutId);
  w.word("kDropThreshold", dmrt::dropoutThreshold(p.dropout));
  w.real("kKeepScale", (float)(1.0 / (1.0 - p.dropout)), "1 / (1 - p)");
  w.real("kScale", (float)p.scale, "softmax scale");
  w.real("kScaleLog2", (float)(p.scale * 1.4426950408889634), "scale * log2(e)");
  os << "};\n\n";

  // The entry's parameters are the kernel ABI's (kernelInputs, kernelOutputs,
  // then the seed), one a line; the device function takes every optional one
  // too (bits, lens), nullptr where the problem has none.
  auto names = [&](const AttentionProblem &q) {
    std::vector<std::string> in = kernelInputs(q, kind), out = kernelOutputs(q, kind);
    const size_t inputs = in.size();
    in.insert(in.end(), out.begin(), out.end());
    return std::make_pair(in, inputs);
  };
  AttentionProblem every = p; // with every optional parameter
  every.keyPadding = every.keepBits = true;
  if (every.dropout <= 0)
    every.dropout = 0.5;
  const auto [params, inputs] = names(p);
  const std::vector<std::string> all = names(every).first;
  auto type = [](const std::string &name) {
    return name == "lse" || name == "drow" ? "float"
           : name == "bits"                ? "unsigned"
           : name == "lens"                ? "int32_t"
                                           : "uint16_t";
  };
  // The blocks an SM ptxas must fit: the tiles' own (a tuning knob), else
  // the kind's hint (hintedBlocks; none for the backward kernels).
  const int threads = 32 * tiles.warps;
  const int minBlocks = tiles.minBlocks > 0 ? tiles.minBlocks : hintedBlocks(kind, tiles.warps);
  os << "extern \"C\" __global__ void __launch_bounds__(" << threads;
  if (minBlocks > 0)
    os << ", " << minBlocks;
  os << ")\n" << entryName << "(";
  for (size_t i = 0; i < params.size(); ++i)
    os << "\n    " << (i < inputs ? "const " : "") << type(params[i]) << " *__restrict__ "
       << params[i] << ",";
  os << "\n    unsigned long long seed) {\n"
     << "  extern __shared__ __align__(128) unsigned char smem[];\n"
     << "  dmcattn::"
     << (kind == AttentionKernelKind::Forward  ? "attentionForward"
         : kind == AttentionKernelKind::GradKV ? "attentionGradKV"
                                               : "attentionGradQ")
     << "<AttentionConfig>(";
  for (const std::string &name : all)
    os << (std::find(params.begin(), params.end(), name) != params.end() ? name : "nullptr")
       << ", ";
  os << "seed, smem);\n";
  os << "}\n";
  return os.str();
}

} // namespace dmcgen
