//===- ManifestReader.cpp - Parse and validate manifest.json --------------===//
#include "runtime/format/JsonReader.h"
#include "runtime/format/Manifest.h"
#include "runtime/format/GemmAlgoConfig.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace dmrt {

namespace {

/// Relative path staying inside the bundle.
bool safeRelative(const std::string &p) {
  if (p.empty() || p[0] == '/')
    return false;
  std::stringstream ss(p);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (part == "..")
      return false;
  return true;
}

bool parseMatrix(Reader &r, const json &o, const std::string &path,
                 int32_t batch, dmrt::MatrixLayout &m) {
  if (!r.object(o, path, {"rows", "cols", "ld", "batch_stride"}) ||
      !r.integer(o, path, "rows", m.rows, 1) ||
      !r.integer(o, path, "cols", m.cols, 1) ||
      !r.integer(o, path, "ld", m.ld, 1) ||
      !r.integer(o, path, "batch_stride", m.batchStride, 0))
    return false;
  m.batchCount = batch;
  return true;
}

/// A launch's `grid` and `block` (at `path`), checked against CUDA's limits.
bool launchShape(Reader &r, const std::string &path, const std::vector<int64_t> &grid,
                 const std::vector<int64_t> &block, int64_t (&gridOut)[3],
                 int64_t (&blockOut)[3]) {
  if (grid.size() != 3)
    return r.fail(path + ".grid", "expected 3 positive integers, got " +
                                      std::to_string(grid.size()));
  if (block.size() != 3)
    return r.fail(path + ".block", "expected 3 positive integers, got " +
                                       std::to_string(block.size()));
  if (block[0] * block[1] * block[2] > 1024)
    return r.fail(path + ".block", "more than 1024 threads per block");
  if (grid[1] > 65535 || grid[2] > 65535 || grid[0] > 2147483647)
    return r.fail(path + ".grid", "exceeds CUDA grid limits");
  for (int d = 0; d < 3; ++d) {
    gridOut[d] = grid[d];
    blockOut[d] = block[d];
  }
  return true;
}

/// Largest element index (+1) a column-major batched matrix touches.
int64_t matrixExtent(const dmrt::MatrixLayout &m) {
  return (m.batchCount - 1) * m.batchStride + (m.rows - 1) + (m.cols - 1) * m.ld + 1;
}

} // namespace

/// Version 3's memory plan (`arena_bytes`, tensors' `arena`, kernels'
/// `workspace_offset`) and version 5's inference plan (the same fields with
/// `inference_`), each then checkArenaPlan; absent before their versions.
/// Defined in ManifestArenaReader.cpp.
bool parseArenaPlan(Reader &r, const json &root, Manifest &m);
/// Version 4's `cubin_bytes` and `cubin_fnv1a64` of every kernel and `init`
/// of every argument; absent before version 4. Defined in
/// ManifestVersion4Reader.cpp.
bool parseCubinIntegrity(Reader &r, const json &root, Manifest &m);

bool parseManifest(const std::string &text, const std::string &fileName,
                   Manifest &out, std::string &error) {
  Reader r(fileName, error);
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return r.fail("", "not valid JSON");
  if (!r.object(root, "", {"format", "version", "model", "arch", "nvrtc",
                           "arena_bytes", "inference_arena_bytes", "tensors", "kernels",
                           "contractions", "steps"}))
    return false;
  Manifest b;
  if (!r.header(root, "dmc-bundle", 1, kManifestVersion, "this runtime", b.format, b.version))
    return false;
  if (!r.str(root, "", "model", b.model) || !r.str(root, "", "arch", b.arch) ||
      !r.str(root, "", "nvrtc", b.nvrtc))
    return false;
  // A field version `introduced` added, found in an older bundle.
  auto tooOld = [&](int64_t introduced, const std::string &path, const std::string &needs) {
    return r.fail(path, "not in bundle versions 1 to " + std::to_string(introduced - 1) + " (" +
                            needs + " version " + std::to_string(introduced) + ")");
  };

  // Tensors.
  const json *arr;
  if (!r.array(root, "", "tensors", arr))
    return false;
  std::set<std::string> names;
  for (size_t i = 0; i < arr->size(); ++i) {
    const json &o = (*arr)[i];
    std::string p = Reader::index("tensors", i);
    BundleTensor t;
    std::string dt, role;
    if (!r.object(o, p, {"id", "name", "role", "dims", "shape", "dtype", "bytes",
                         "alias", "arena", "inference_arena", "init"}) ||
        !r.integer(o, p, "id", t.id, 0) || !r.str(o, p, "name", t.name) ||
        !r.str(o, p, "role", role) || !r.str(o, p, "dims", t.dims) ||
        !r.intArray(o, p, "shape", t.shape, 0) || !r.str(o, p, "dtype", dt) ||
        !r.integer(o, p, "bytes", t.bytes, 0))
      return false;
    if (!parseTensorRole(role, t.role))
      return r.fail(p + ".role", "expected one of input, param, grad_output, "
                                 "output, grad, intermediate; got \"" +
                                     role + "\"");
    if (!parseDType(dt, t.dtype) ||
        (t.dtype != DType::BF16 && t.dtype != DType::F16 && t.dtype != DType::F32 &&
         t.dtype != DType::I32))
      return r.fail(p + ".dtype", "expected " +
                                      dtypeList({DType::BF16, DType::F16, DType::F32,
                                                 DType::I32}) +
                                      "; got \"" + dt + "\"");
    if (t.dims.size() != t.shape.size())
      return r.fail(p + ".shape", "has " + std::to_string(t.shape.size()) +
                                      " dims but \"dims\" names " +
                                      std::to_string(t.dims.size()));
    for (int64_t s : t.shape)
      if (s > (int64_t(1) << 40))
        return r.fail(p + ".shape", "impossible size " + std::to_string(s));
    if (t.numElements() * static_cast<int64_t>(dtypeSize(t.dtype)) != t.bytes)
      return r.fail(p + ".bytes",
                    "expected " +
                        std::to_string(t.numElements() * dtypeSize(t.dtype)) +
                        " (shape x " + dt + "), got " + std::to_string(t.bytes));
    const json *al;
    if (!r.field(o, p, "alias", al))
      return false;
    if (!al->is_null()) {
      std::string ap = p + ".alias";
      if (!r.object(*al, ap, {"of", "offset", "strides"}) ||
          !r.integer(*al, ap, "of", t.aliasOf, 0) ||
          !r.integer(*al, ap, "offset", t.aliasOffset, 0))
        return false;
      t.isAlias = true;
      // strides: optional; version 10 introduced it (a strided view).
      if (al->contains("strides")) {
        if (b.version < 10)
          return tooOld(10, ap + ".strides", "a strided view needs");
        if (!r.intArray(*al, ap, "strides", t.aliasStrides, 0))
          return false;
        if (t.aliasStrides.size() != t.shape.size())
          return r.fail(ap + ".strides", "has " + std::to_string(t.aliasStrides.size()) +
                                             " strides for " + std::to_string(t.shape.size()) +
                                             " dims");
      }
    }
    if (b.tensorIndex_.count(t.id))
      return r.fail(p + ".id", "duplicate tensor id " + std::to_string(t.id));
    // Callers bind tensors by name: a second tensor of one name could never be bound.
    if (!names.insert(t.name).second)
      return r.fail(p + ".name", "duplicate tensor name \"" + t.name + "\"");
    b.tensorIndex_[t.id] = b.tensors.size();
    b.tensors.push_back(std::move(t));
  }
  // Aliases: existing target, same dtype, no cycle, in range of the base.
  for (size_t i = 0; i < b.tensors.size(); ++i) {
    const BundleTensor &t = b.tensors[i];
    if (!t.isAlias)
      continue;
    std::string p = Reader::index("tensors", i) + ".alias";
    const BundleTensor *cur = &t;
    int64_t offset = 0;
    std::set<int64_t> seen{t.id};
    while (cur->isAlias) {
      const BundleTensor *next = b.tensor(cur->aliasOf);
      if (!next)
        return r.fail(p + ".of", "tensor " + std::to_string(cur->id) +
                                     " aliases unknown tensor id " +
                                     std::to_string(cur->aliasOf));
      if (next->dtype != t.dtype)
        return r.fail(p + ".of", std::string("alias of a ") +
                                     dtypeName(next->dtype) + " tensor (" +
                                     next->name + ") but this one is " +
                                     dtypeName(t.dtype));
      offset += cur->aliasOffset;
      if (!seen.insert(next->id).second)
        return r.fail(p, "alias cycle through tensor " + std::to_string(next->id) +
                             " (" + next->name + ")");
      cur = next;
    }
    // Offsets compose along an alias chain, strides do not: a strided view
    // views its base, and nothing views a strided view.
    if (!t.aliasStrides.empty() && b.tensor(t.aliasOf)->isAlias)
      return r.fail(p + ".of", "a strided view must view its base directly, not alias " +
                                   b.tensor(t.aliasOf)->name + " (itself a view)");
    if (!b.tensor(t.aliasOf)->aliasStrides.empty())
      return r.fail(p + ".of", "aliases " + b.tensor(t.aliasOf)->name +
                                   ", a strided view: alias its base instead");
    if (offset + t.spanElements() > cur->numElements())
      return r.fail(p, "elements [" + std::to_string(offset) + ", " +
                           std::to_string(offset + t.spanElements()) +
                           ") out of range of tensor " + std::to_string(cur->id) +
                           " (" + cur->name + ", " +
                           std::to_string(cur->numElements()) + " elements)");
  }
  auto checkTensorRef = [&](int64_t id, const std::string &path) {
    if (!b.tensor(id))
      return r.fail(path, "unknown tensor id " + std::to_string(id));
    return true;
  };

  // Kernels.
  if (!r.array(root, "", "kernels", arr))
    return false;
  for (size_t i = 0; i < arr->size(); ++i) {
    const json &o = (*arr)[i];
    std::string p = Reader::index("kernels", i);
    BundleKernel k;
    std::vector<int64_t> grid, block;
    if (!r.object(o, p, {"id", "name", "entry", "cubin", "source", "grid",
                         "block", "shared_bytes", "config", "phase", "inputs",
                         "outputs", "flop", "bytes", "workspace_bytes",
                         "workspace_offset", "inference_workspace_offset", "cubin_bytes",
                         "cubin_fnv1a64", "finish"}) ||
        !r.integer(o, p, "id", k.id, 0) || !r.str(o, p, "name", k.name) ||
        !r.str(o, p, "entry", k.entry) || !r.str(o, p, "cubin", k.cubin) ||
        !r.str(o, p, "source", k.source) || !r.intArray(o, p, "grid", grid, 1) ||
        !r.intArray(o, p, "block", block, 1) ||
        !r.integer(o, p, "shared_bytes", k.sharedBytes, 0) ||
        !r.str(o, p, "config", k.config) || !r.str(o, p, "phase", k.phase) ||
        !r.intArray(o, p, "inputs", k.inputs, 0) ||
        !r.intArray(o, p, "outputs", k.outputs, 0) ||
        !r.integer(o, p, "flop", k.flop, 0) || !r.integer(o, p, "bytes", k.bytes, 0))
      return false;
    // workspace_bytes: optional (default 0); version 2 introduced it.
    if (auto wit = o.find("workspace_bytes"); wit != o.end()) {
      std::string wp = p + ".workspace_bytes";
      if (b.version < 2)
        return r.fail(wp, "not in bundle version 1 (a kernel workspace needs "
                          "version 2)");
      if (!r.integer(*wit, wp, k.workspaceBytes, 0,
                     "a non-negative integer (bytes of zeroed scratch memory)"))
        return false;
      if (k.workspaceBytes > (int64_t(1) << 40))
        return r.fail(wp, "impossible size " + std::to_string(k.workspaceBytes));
    }
    if (!launchShape(r, p, grid, block, k.grid, k.block))
      return false;
    // finish: optional; version 7 introduced it.
    if (auto fit = o.find("finish"); fit != o.end()) {
      std::string fp = p + ".finish";
      if (b.version < 7)
        return tooOld(7, fp, "a kernel's finishing launch needs");
      std::vector<int64_t> fgrid, fblock;
      if (!r.object(*fit, fp, {"entry", "grid", "block", "outputs"}) ||
          !r.str(*fit, fp, "entry", k.finishEntry) ||
          !r.intArray(*fit, fp, "grid", fgrid, 1) || !r.intArray(*fit, fp, "block", fblock, 1) ||
          !launchShape(r, fp, fgrid, fblock, k.finishGrid, k.finishBlock))
        return false;
      if (k.finishEntry.empty() || k.finishEntry == k.entry)
        return r.fail(fp + ".entry", "expected an entry other than the kernel's own, got \"" +
                                         k.finishEntry + "\"");
      // outputs: optional; version 9 introduced it.
      if (fit->contains("outputs")) {
        if (b.version < 9)
          return tooOld(9, fp + ".outputs", "the outputs of a finishing launch need");
        if (!r.intArray(*fit, fp, "outputs", k.finishOutputs, 0))
          return false;
        for (size_t n = 0; n < k.finishOutputs.size(); ++n) {
          int64_t v = k.finishOutputs[n];
          std::string ep = fp + ".outputs[" + std::to_string(n) + "]";
          if (v < 0 || v >= int64_t(k.outputs.size()))
            return r.fail(ep, "expected a position in the kernel's " +
                                  std::to_string(k.outputs.size()) + " outputs, got " +
                                  std::to_string(v));
          if (std::find(k.finishOutputs.begin(), k.finishOutputs.begin() + n, v) !=
              k.finishOutputs.begin() + n)
            return r.fail(ep, "output " + std::to_string(v) + " is listed twice");
        }
      }
    }
    if (!safeRelative(k.cubin))
      return r.fail(p + ".cubin", "expected a relative path inside the bundle, got \"" +
                                      k.cubin + "\"");
    for (size_t j = 0; j < k.inputs.size(); ++j)
      if (!checkTensorRef(k.inputs[j], Reader::index(p + ".inputs", j)))
        return false;
    for (size_t j = 0; j < k.outputs.size(); ++j)
      if (!checkTensorRef(k.outputs[j], Reader::index(p + ".outputs", j)))
        return false;
    if (b.kernelIndex_.count(k.id))
      return r.fail(p + ".id", "duplicate kernel id " + std::to_string(k.id));
    b.kernelIndex_[k.id] = b.kernels.size();
    b.kernels.push_back(std::move(k));
  }

  // Contractions.
  if (!r.array(root, "", "contractions", arr))
    return false;
  for (size_t i = 0; i < arr->size(); ++i) {
    const json &o = (*arr)[i];
    std::string p = Reader::index("contractions", i);
    BundleContraction c;
    std::string epi;
    if (!r.object(o, p, {"id", "equation", "phase", "a", "b", "d", "bias", "alpha",
                         "beta", "epilogue", "flop", "bytes", "gemm",
                         "unmappable", "algorithm"}) ||
        !r.integer(o, p, "id", c.id, 0) || !r.str(o, p, "equation", c.equation) ||
        !r.str(o, p, "phase", c.phase) || !r.integer(o, p, "a", c.a, 0) ||
        !r.integer(o, p, "b", c.b, 0) || !r.integer(o, p, "d", c.d, 0) ||
        !r.number(o, p, "alpha", c.alpha) || !r.number(o, p, "beta", c.beta) ||
        !r.str(o, p, "epilogue", epi) || !r.integer(o, p, "flop", c.flop, 0) ||
        !r.integer(o, p, "bytes", c.bytes, 0))
      return false;
    if (!checkTensorRef(c.a, p + ".a") || !checkTensorRef(c.b, p + ".b") ||
        !checkTensorRef(c.d, p + ".d"))
      return false;
    if (!parseEpilogue(epi, c.epilogue))
      return r.fail(p + ".epilogue", "unknown epilogue \"" + epi + "\"");
    if (dmrt::epilogueReadsAddend(c.epilogue) && b.version < 8)
      return r.fail(p + ".epilogue", "\"accumulate\" is not in bundle versions 1 to 7 (an "
                                     "addend read as C needs version 8)");
    // algorithm: optional (default "heuristic"); version 6 introduced it.
    if (o.contains("algorithm")) {
      if (b.version < 6)
        return tooOld(6, p + ".algorithm", "a chosen cuBLASLt algorithm needs");
      if (!r.str(o, p, "algorithm", c.algorithm))
        return false;
      GemmAlgoConfig algo;
      std::string why;
      if (c.algorithm != kHeuristicAlgorithm && !parseAlgorithm(c.algorithm, algo, why))
        return r.fail(p + ".algorithm", why);
    }
    auto bit = o.find("bias");
    if (bit != o.end() && !bit->is_null()) {
      if (!r.integer(*bit, p + ".bias", c.bias, 0) ||
          !checkTensorRef(c.bias, p + ".bias"))
        return false;
    }
    bool needsBias = dmrt::epilogueReadsBias(c.epilogue) ||
                     dmrt::epilogueWritesBias(c.epilogue);
    bool addend = dmrt::epilogueReadsAddend(c.epilogue);
    if ((needsBias || addend) && c.bias < 0)
      return r.fail(p + ".bias", std::string("epilogue ") + epi +
                                     (addend ? " needs the addend's tensor id"
                                             : " needs a bias tensor id"));
    if (addend) {
      // The addend is C: D's element type, shape and storage order.
      const BundleTensor *at = b.tensor(c.bias), *dt = b.tensor(c.d);
      if (at->dtype != dt->dtype || at->shape != dt->shape || at->dims != dt->dims)
        return r.fail(p + ".bias", "epilogue accumulate: the addend " + at->name +
                                       " must have the type, shape and layout of d (" +
                                       dt->name + ")");
      if (c.beta != 0)
        return r.fail(p + ".beta", "epilogue accumulate reads its addend, not d: beta must be 0");
    }
    if (!needsBias && !addend && c.bias >= 0)
      return r.fail(p + ".bias", std::string("epilogue ") + epi +
                                     " has no bias; expected null");
    const json *g, *un;
    if (!r.field(o, p, "gemm", g) || !r.field(o, p, "unmappable", un))
      return false;
    if (!un->is_null() && !un->is_string())
      return r.fail(p + ".unmappable",
                    "expected null or a string, got " + describeValue(*un));
    if (g->is_null()) {
      if (!un->is_string())
        return r.fail(p + ".unmappable",
                      "gemm is null: expected the reason as a string");
      c.unmappable = un->get<std::string>();
    } else {
      if (!un->is_null())
        return r.fail(p + ".unmappable", "expected null when gemm is given");
      std::string gp = p + ".gemm";
      dmrt::GemmDescriptor &d = c.gemm;
      std::string ta, tb;
      int64_t batch;
      if (!r.object(*g, gp, {"swap", "transa", "transb", "m", "n", "k", "batch",
                             "a", "b", "d", "describe"}) ||
          !r.boolean(*g, gp, "swap", d.swapOperands) ||
          !r.str(*g, gp, "transa", ta) || !r.str(*g, gp, "transb", tb) ||
          !r.integer(*g, gp, "m", d.m, 1) || !r.integer(*g, gp, "n", d.n, 1) ||
          !r.integer(*g, gp, "k", d.k, 1) || !r.integer(*g, gp, "batch", batch, 1) ||
          !r.str(*g, gp, "describe", c.gemmDescription))
        return false;
      if (batch > INT32_MAX)
        return r.fail(gp + ".batch", "too large");
      d.batchCount = static_cast<int32_t>(batch);
      for (auto [name, val, slot] :
           {std::make_tuple("transa", &ta, &d.transA),
            std::make_tuple("transb", &tb, &d.transB)}) {
        if (*val == "N") *slot = Transpose::N;
        else if (*val == "T") *slot = Transpose::T;
        else
          return r.fail(gp + "." + name, "expected \"N\" or \"T\", got \"" + *val + "\"");
      }
      const json *ma, *mb, *md;
      if (!r.field(*g, gp, "a", ma) || !parseMatrix(r, *ma, gp + ".a", d.batchCount, d.a) ||
          !r.field(*g, gp, "b", mb) || !parseMatrix(r, *mb, gp + ".b", d.batchCount, d.b) ||
          !r.field(*g, gp, "d", md) || !parseMatrix(r, *md, gp + ".d", d.batchCount, d.d))
        return false;
      d.c = d.d;
      d.alpha = c.alpha;
      d.beta = c.beta;
      d.epilogue = c.epilogue;
      if (needsBias) {
        d.biasLength = c.epilogue == dmrt::Epilogue::BGradB ? d.n : d.m;
        const BundleTensor *bt = b.tensor(c.bias);
        if (bt->numElements() == d.biasLength * d.batchCount && d.batchCount > 1)
          d.biasBatchStride = d.biasLength;
        else if (bt->numElements() != d.biasLength)
          return r.fail(p + ".bias", "bias tensor " + bt->name + " has " +
                                         std::to_string(bt->numElements()) +
                                         " elements; the gemm needs " +
                                         std::to_string(d.biasLength));
      }
      if (dmrt::epilogueWritesAux(c.epilogue) || dmrt::epilogueReadsAux(c.epilogue))
        return r.fail(p + ".epilogue", "aux epilogues are not in bundle versions 1 to " +
                                           std::to_string(kManifestVersion));
      std::string why;
      if (!dmrt::validateDescriptor(d, why))
        return r.fail(gp, "invalid descriptor: " + why);
      // The operands (after the swap) must fit in their tensors.
      int64_t first = d.swapOperands ? c.b : c.a, second = d.swapOperands ? c.a : c.b;
      for (auto [name, id, m] : {std::make_tuple("a", first, &d.a),
                                 std::make_tuple("b", second, &d.b),
                                 std::make_tuple("d", c.d, &d.d)}) {
        const BundleTensor *t = b.tensor(id);
        if (matrixExtent(*m) > t->numElements())
          return r.fail(gp + "." + name,
                        "matrix reaches element " + std::to_string(matrixExtent(*m) - 1) +
                            " but tensor " + std::to_string(id) + " (" + t->name +
                            ") has " + std::to_string(t->numElements()));
      }
      c.mappable = true;
    }
    if (b.contractionIndex_.count(c.id))
      return r.fail(p + ".id", "duplicate contraction id " + std::to_string(c.id));
    b.contractionIndex_[c.id] = b.contractions.size();
    b.contractions.push_back(std::move(c));
  }

  // Steps.
  if (!r.array(root, "", "steps", arr))
    return false;
  for (size_t i = 0; i < arr->size(); ++i) {
    const json &o = (*arr)[i];
    std::string p = Reader::index("steps", i);
    BundleStep s;
    std::string kind;
    if (!r.object(o, p, {"kind", "id"}) || !r.str(o, p, "kind", kind) ||
        !r.integer(o, p, "id", s.id, 0))
      return false;
    if (kind == "kernel") {
      s.kind = BundleStep::Kernel;
      if (!b.kernel(s.id))
        return r.fail(p + ".id", "unknown kernel id " + std::to_string(s.id));
    } else if (kind == "contraction") {
      s.kind = BundleStep::Contraction;
      const BundleContraction *c = b.contraction(s.id);
      if (!c)
        return r.fail(p + ".id", "unknown contraction id " + std::to_string(s.id));
    } else {
      return r.fail(p + ".kind",
                    "expected \"kernel\" or \"contraction\", got \"" + kind + "\"");
    }
    b.steps.push_back(s);
  }
  if (!parseArenaPlan(r, root, b) || !parseCubinIntegrity(r, root, b))
    return false;
  out = std::move(b);
  return true;
}

} // namespace dmrt
