//===- GemmDescriptor.cpp - cuBLASLt descriptors: epilogues, checks, text -===//
//
// What a GemmDescriptor means to cuBLASLt, independent of einsum letters:
// epilogue names and properties, validation, aux compatibility, describe().
//
//===----------------------------------------------------------------------===//
#include "runtime/format/GemmDescriptor.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <sstream>

namespace dmrt {

//===----------------------------------------------------------------------===//
// Epilogue helpers
//===----------------------------------------------------------------------===//

const char *epilogueName(Epilogue e) {
  switch (e) {
  case Epilogue::None: return "DEFAULT";
  case Epilogue::Bias: return "BIAS";
  case Epilogue::Relu: return "RELU";
  case Epilogue::ReluBias: return "RELU_BIAS";
  case Epilogue::ReluAux: return "RELU_AUX";
  case Epilogue::ReluAuxBias: return "RELU_AUX_BIAS";
  case Epilogue::Gelu: return "GELU";
  case Epilogue::GeluBias: return "GELU_BIAS";
  case Epilogue::GeluAux: return "GELU_AUX";
  case Epilogue::GeluAuxBias: return "GELU_AUX_BIAS";
  case Epilogue::DRelu: return "DRELU";
  case Epilogue::DReluBGrad: return "DRELU_BGRAD";
  case Epilogue::DGelu: return "DGELU";
  case Epilogue::DGeluBGrad: return "DGELU_BGRAD";
  case Epilogue::BGradA: return "BGRADA";
  case Epilogue::BGradB: return "BGRADB";
  case Epilogue::Accumulate: return "ACCUMULATE";
  }
  return "?";
}

std::string epilogueManifestName(Epilogue e) {
  if (e == Epilogue::None)
    return "none";
  std::string n = epilogueName(e);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return n;
}

bool parseEpilogue(const std::string &s, Epilogue &out) {
  for (int i = 0; i <= static_cast<int>(Epilogue::Accumulate); ++i) {
    auto e = static_cast<Epilogue>(i);
    if (s == epilogueManifestName(e) || (e == Epilogue::None && s == "default")) {
      out = e;
      return true;
    }
  }
  return false;
}

bool epilogueReadsBias(Epilogue e) {
  return e == Epilogue::Bias || e == Epilogue::ReluBias ||
         e == Epilogue::ReluAuxBias || e == Epilogue::GeluBias ||
         e == Epilogue::GeluAuxBias;
}
bool epilogueWritesBias(Epilogue e) {
  return e == Epilogue::DReluBGrad || e == Epilogue::DGeluBGrad ||
         e == Epilogue::BGradA || e == Epilogue::BGradB;
}
bool epilogueReadsAddend(Epilogue e) { return e == Epilogue::Accumulate; }
bool epilogueWritesAux(Epilogue e) {
  return e == Epilogue::ReluAux || e == Epilogue::ReluAuxBias ||
         e == Epilogue::GeluAux || e == Epilogue::GeluAuxBias;
}
bool epilogueReadsAux(Epilogue e) {
  return e == Epilogue::DRelu || e == Epilogue::DReluBGrad ||
         e == Epilogue::DGelu || e == Epilogue::DGeluBGrad;
}
bool epilogueIsRelu(Epilogue e) {
  return e == Epilogue::Relu || e == Epilogue::ReluBias ||
         e == Epilogue::ReluAux || e == Epilogue::ReluAuxBias ||
         e == Epilogue::DRelu || e == Epilogue::DReluBGrad;
}

//===----------------------------------------------------------------------===//
// Descriptor helpers
//===----------------------------------------------------------------------===//

int64_t GemmDescriptor::auxSize() const {
  if (!epilogueWritesAux(epilogue) && !epilogueReadsAux(epilogue))
    return 0;
  return batchCount > 1 ? auxBatchStride * batchCount : auxLd * n;
}

static const char *opName(Transpose t) { return t == Transpose::T ? "T" : "N"; }

std::string commaSeparated(const std::string &letters) {
  std::string s;
  for (char ch : letters) {
    if (!s.empty())
      s += ',';
    s += ch;
  }
  return s.empty() ? "-" : s;
}

static std::string layoutStr(const MatrixLayout &l) {
  std::ostringstream os;
  os << l.rows << "x" << l.cols << " ld=" << l.ld;
  if (l.batchCount > 1)
    os << " bs=" << l.batchStride;
  return os.str();
}

std::string GemmDescriptor::describe() const {
  std::ostringstream os;
  os << (swapOperands ? "swap (D^T = b^T a^T)" : "no swap") << ": m=" << m
     << "[" << commaSeparated(rowDims) << "] n=" << n << "[" << commaSeparated(colDims)
     << "] k=" << k << "[" << commaSeparated(kDims) << "] batch=" << batchCount << "["
     << commaSeparated(batchDims) << "]; A=" << (swapOperands ? "b" : "a") << " op"
     << opName(transA) << " " << layoutStr(a) << "; B="
     << (swapOperands ? "a" : "b") << " op" << opName(transB) << " "
     << layoutStr(b) << "; D " << layoutStr(d) << "; alpha=" << alpha
     << " beta=" << beta << "; epilogue " << epilogueName(epilogue);
  if (biasLength)
    os << " bias[" << biasLength << "] bs=" << biasBatchStride;
  if (auxLd)
    os << " aux ld=" << auxLd << " bs=" << auxBatchStride
       << (epilogueIsRelu(epilogue) ? " (bits)" : "");
  return os.str();
}

bool validateDescriptor(const GemmDescriptor &g, std::string &reason) {
  auto fail = [&](const std::string &s) {
    reason = s;
    return false;
  };
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.batchCount < 1)
    return fail("m, n, k and batchCount must be positive");
  auto checkMat = [&](const char *name, const MatrixLayout &l, int64_t rows,
                      int64_t cols) -> bool {
    if (l.rows != rows || l.cols != cols) {
      reason = std::string("matrix ") + name + " is " + std::to_string(l.rows) +
               "x" + std::to_string(l.cols) + " but its op needs " +
               std::to_string(rows) + "x" + std::to_string(cols);
      return false;
    }
    if (l.ld < std::max<int64_t>(1, l.rows)) {
      reason = std::string("matrix ") + name + ": ld " + std::to_string(l.ld) +
               " < rows " + std::to_string(l.rows) +
               " (column-major needs ld >= rows)";
      return false;
    }
    if (l.batchCount != g.batchCount) {
      reason = std::string("matrix ") + name + ": batch count " +
               std::to_string(l.batchCount) + " differs from " +
               std::to_string(g.batchCount);
      return false;
    }
    return true;
  };
  bool ta = g.transA == Transpose::T, tb = g.transB == Transpose::T;
  if (!checkMat("A", g.a, ta ? g.k : g.m, ta ? g.m : g.k) ||
      !checkMat("B", g.b, tb ? g.n : g.k, tb ? g.k : g.n) ||
      !checkMat("C", g.c, g.m, g.n) || !checkMat("D", g.d, g.m, g.n))
    return false;
  bool bias = epilogueReadsBias(g.epilogue) || epilogueWritesBias(g.epilogue);
  int64_t wantBias = !bias ? 0 : g.epilogue == Epilogue::BGradB ? g.n : g.m;
  if (g.biasLength != wantBias)
    return fail("bias length " + std::to_string(g.biasLength) + " but " +
                epilogueName(g.epilogue) + " needs " + std::to_string(wantBias));
  if (epilogueWritesAux(g.epilogue) || epilogueReadsAux(g.epilogue)) {
    int64_t align = epilogueIsRelu(g.epilogue) ? 128 : 8;
    if (g.auxLd < g.m || g.auxLd % align)
      return fail("aux ld " + std::to_string(g.auxLd) +
                  " must be >= rows and divisible by " + std::to_string(align));
    if (g.batchCount > 1 &&
        (g.auxBatchStride % align || g.auxBatchStride < g.auxLd * g.n))
      return fail("aux batch stride " + std::to_string(g.auxBatchStride) +
                  " must be divisible by " + std::to_string(align) +
                  " and cover one aux matrix");
  }
  return true;
}

bool auxCompatible(const GemmDescriptor &p, const GemmDescriptor &c,
                   std::string &reason) {
  if (!epilogueWritesAux(p.epilogue)) {
    reason = std::string("producer epilogue ") + epilogueName(p.epilogue) +
             " writes no aux";
    return false;
  }
  if (!epilogueReadsAux(c.epilogue)) {
    reason = std::string("consumer epilogue ") + epilogueName(c.epilogue) +
             " reads no aux";
    return false;
  }
  if (epilogueIsRelu(p.epilogue) != epilogueIsRelu(c.epilogue)) {
    reason = std::string("aux kinds differ: ") + epilogueName(p.epilogue) +
             " vs " + epilogueName(c.epilogue);
    return false;
  }
  if (p.m != c.m || p.n != c.n || p.batchCount != c.batchCount ||
      p.auxLd != c.auxLd || p.auxBatchStride != c.auxBatchStride) {
    reason = "aux matrix differs: producer D is " + std::to_string(p.m) + "x" +
             std::to_string(p.n) + " rows [" + commaSeparated(p.rowDims) +
             "] ld " + std::to_string(p.auxLd) + ", consumer D is " +
             std::to_string(c.m) + "x" + std::to_string(c.n) + " rows [" +
             commaSeparated(c.rowDims) + "] ld " + std::to_string(c.auxLd) +
             " (both GEMMs must put the same dims on D's rows)";
    return false;
  }
  if (p.rowDims != c.rowDims || p.colDims != c.colDims ||
      p.batchDims != c.batchDims) {
    reason = "aux matrix differs in which letters are rows/cols/batch: [" +
             p.rowDims + "|" + p.colDims + "|" + p.batchDims + "] vs [" +
             c.rowDims + "|" + c.colDims + "|" + c.batchDims + "]";
    return false;
  }
  return true;
}

} // namespace dmrt
