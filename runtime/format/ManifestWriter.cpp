//===- ManifestWriter.cpp - manifest.json from a Manifest -----------------===//
//
// The one writer of the format ManifestReader.cpp reads: the same fields in
// the order docs/bundle-format.md shows them.
//
//===----------------------------------------------------------------------===//
#include "runtime/format/Checksum.h"
#include "runtime/format/Manifest.h"

#include <nlohmann/json.hpp>

namespace dmrt {
namespace {

using ojson = nlohmann::ordered_json;

ojson matrixJson(const MatrixLayout &m) {
  return {{"rows", m.rows}, {"cols", m.cols}, {"ld", m.ld}, {"batch_stride", m.batchStride}};
}

ojson idOrNull(int64_t id) { return id >= 0 ? ojson(id) : ojson(nullptr); }

/// `arena` exists from version 3 on, `inference_arena` from version 5 on.
ojson tensorJson(const BundleTensor &t, int64_t version) {
  ojson alias = nullptr;
  if (t.isAlias)
    alias = {{"of", t.aliasOf}, {"offset", t.aliasOffset}};
  if (t.isAlias && !t.aliasStrides.empty())
    alias["strides"] = t.aliasStrides;
  ojson o = {{"id", t.id},          {"name", t.name},
             {"role", tensorRoleName(t.role)},
             {"dims", t.dims},      {"shape", t.shape},
             {"dtype", dtypeName(t.dtype)},
             {"bytes", t.bytes},    {"alias", std::move(alias)}};
  if (version >= 3)
    o["arena"] = idOrNull(t.arenaOffset);
  if (version >= 5)
    o["inference_arena"] = idOrNull(t.inferenceArenaOffset);
  if (version >= 4 && t.hasInit)
    o["init"] = {{"mean", t.initMean}, {"range", t.initRange}, {"max", t.initMax}};
  return o;
}

/// `workspace_bytes` exists from version 2 on (version 1 readers reject it),
/// `workspace_offset` from version 3 on, for kernels with a workspace;
/// `inference_workspace_offset` from version 5 on, where the plan gives one;
/// `cubin_bytes` and `cubin_fnv1a64` from version 4 on; `finish` (version 7)
/// for kernels with one, with its `outputs` from version 9 on.
ojson kernelJson(const BundleKernel &k, int64_t version) {
  ojson o = {{"id", k.id},
          {"name", k.name},
          {"entry", k.entry},
          {"cubin", k.cubin},
          {"source", k.source},
          {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
          {"block", {k.block[0], k.block[1], k.block[2]}},
          {"shared_bytes", k.sharedBytes},
          {"workspace_bytes", k.workspaceBytes},
          {"workspace_offset", k.workspaceOffset},
          {"inference_workspace_offset", k.inferenceWorkspaceOffset},
          {"config", k.config},
          {"phase", k.phase},
          {"inputs", k.inputs},
          {"outputs", k.outputs},
          {"flop", k.flop},
          {"bytes", k.bytes},
          {"cubin_bytes", k.cubinBytes},
          {"cubin_fnv1a64", checksumHex(k.cubinChecksum)}};
  if (version < 4) {
    o.erase("cubin_bytes");
    o.erase("cubin_fnv1a64");
  }
  if (version < 3 || k.workspaceBytes == 0)
    o.erase("workspace_offset");
  if (version < 5 || k.inferenceWorkspaceOffset < 0)
    o.erase("inference_workspace_offset");
  if (version < 2)
    o.erase("workspace_bytes");
  if (!k.finishEntry.empty()) {
    o["finish"] = {{"entry", k.finishEntry},
                   {"grid", {k.finishGrid[0], k.finishGrid[1], k.finishGrid[2]}},
                   {"block", {k.finishBlock[0], k.finishBlock[1], k.finishBlock[2]}}};
    if (version >= 9 && !k.finishOutputs.empty())
      o["finish"]["outputs"] = k.finishOutputs;
  }
  return o;
}

ojson gemmJson(const BundleContraction &c) {
  const GemmDescriptor &g = c.gemm;
  return {{"swap", g.swapOperands},
          {"transa", g.transA == Transpose::T ? "T" : "N"},
          {"transb", g.transB == Transpose::T ? "T" : "N"},
          {"m", g.m},
          {"n", g.n},
          {"k", g.k},
          {"batch", g.batchCount},
          {"a", matrixJson(g.a)},
          {"b", matrixJson(g.b)},
          {"d", matrixJson(g.d)},
          {"describe", c.gemmDescription.empty() ? g.describe() : c.gemmDescription}};
}

/// `algorithm` exists from version 6 on.
ojson contractionJson(const BundleContraction &c, int64_t version) {
  ojson o = {{"id", c.id},
          {"equation", c.equation},
          {"phase", c.phase},
          {"a", c.a},
          {"b", c.b},
          {"d", c.d},
          {"bias", idOrNull(c.bias)},
          {"alpha", c.alpha},
          {"beta", c.beta},
          {"epilogue", epilogueManifestName(c.epilogue)},
          {"flop", c.flop},
          {"bytes", c.bytes},
          {"gemm", c.mappable ? gemmJson(c) : ojson(nullptr)},
          {"unmappable", c.mappable ? ojson(nullptr) : ojson(c.unmappable)}};
  if (version >= 6)
    o["algorithm"] = c.algorithm;
  return o;
}

} // namespace

std::string writeManifest(const Manifest &m) {
  ojson tensors = ojson::array(), kernels = ojson::array(), contractions = ojson::array(),
        steps = ojson::array();
  for (const BundleTensor &t : m.tensors)
    tensors.push_back(tensorJson(t, m.version));
  for (const BundleKernel &k : m.kernels)
    kernels.push_back(kernelJson(k, m.version));
  for (const BundleContraction &c : m.contractions)
    contractions.push_back(contractionJson(c, m.version));
  for (const BundleStep &s : m.steps)
    steps.push_back(
        {{"kind", s.kind == BundleStep::Kernel ? "kernel" : "contraction"}, {"id", s.id}});
  ojson root = {{"format", m.format},
                {"version", m.version},
                {"model", m.model},
                {"arch", m.arch},
                {"nvrtc", m.nvrtc},
                {"arena_bytes", m.arenaBytes},
                {"inference_arena_bytes", m.inferenceArenaBytes},
                {"tensors", std::move(tensors)},
                {"kernels", std::move(kernels)},
                {"contractions", std::move(contractions)},
                {"steps", std::move(steps)}};
  if (m.version < 3)
    root.erase("arena_bytes");
  if (m.version < 5)
    root.erase("inference_arena_bytes");
  return root.dump(2, ' ', false, decltype(root)::error_handler_t::replace) + "\n";
}

} // namespace dmrt
