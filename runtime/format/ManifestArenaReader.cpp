//===- ManifestArenaReader.cpp - Read and check the memory plans ----------===//
//
// Part of the manifest reader (ManifestReader.cpp calls parseArenaPlan once
// tensors, kernels, contractions and steps are read): the training plan's
// fields (version 3), the inference plan's (version 5), then checkArenaPlan
// (runtime/format/ArenaPlan.h) on each plan the manifest has.
//
//===----------------------------------------------------------------------===//
#include "runtime/format/ArenaPlan.h"
#include "runtime/format/JsonReader.h"
#include "runtime/format/Manifest.h"

namespace dmrt {

namespace {

/// `key` of `o` must be absent before version `since`, the version of plan `what`.
bool absentBefore(Reader &r, const Manifest &m, const json &o, const std::string &path,
                  const char *key, int64_t since, const char *what) {
  if (m.version >= since || o.find(key) == o.end())
    return true;
  return r.fail(Reader::join(path, key), "not in bundle version " +
                                             std::to_string(m.version) + " (" + what +
                                             " needs version " + std::to_string(since) + ")");
}

/// An offset in bytes: a non-negative integer below 2^40.
bool offset(Reader &r, const json &v, const std::string &path, int64_t &out) {
  if (!r.integer(v, path, out, 0, "a non-negative integer (a byte offset in the arena)"))
    return false;
  if (out > (int64_t(1) << 40))
    return r.fail(path, "impossible offset " + std::to_string(out));
  return true;
}

/// One plan's fields: `bytesKey` at the top level, `tensorKey` on every
/// tensor (required; null or an offset), `kernelKey` on kernels (optional),
/// when the manifest's version has the plan (`since`); else all absent.
bool parsePlanFields(Reader &r, const json &root, Manifest &m, ArenaPlanKind kind,
                     int64_t since, const char *what) {
  bool inference = kind == ArenaPlanKind::Inference;
  const char *bytesKey = inference ? "inference_arena_bytes" : "arena_bytes";
  const char *tensorKey = inference ? "inference_arena" : "arena";
  const char *kernelKey = inference ? "inference_workspace_offset" : "workspace_offset";
  const json &tensors = root["tensors"], &kernels = root["kernels"];
  if (m.version < since) {
    if (!absentBefore(r, m, root, "", bytesKey, since, what))
      return false;
    for (size_t i = 0; i < tensors.size(); ++i)
      if (!absentBefore(r, m, tensors[i], Reader::index("tensors", i), tensorKey, since, what))
        return false;
    for (size_t i = 0; i < kernels.size(); ++i)
      if (!absentBefore(r, m, kernels[i], Reader::index("kernels", i), kernelKey, since, what))
        return false;
    return true;
  }
  const json *v;
  if (!r.field(root, "", bytesKey, v) ||
      !offset(r, *v, bytesKey, inference ? m.inferenceArenaBytes : m.arenaBytes))
    return false;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string p = Reader::index("tensors", i);
    BundleTensor &t = m.tensors[i];
    if (!r.field(tensors[i], p, tensorKey, v))
      return false;
    if (!v->is_null() &&
        !offset(r, *v, p + "." + tensorKey, inference ? t.inferenceArenaOffset : t.arenaOffset))
      return false;
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string p = Reader::index("kernels", i) + "." + kernelKey;
    BundleKernel &k = m.kernels[i];
    auto it = kernels[i].find(kernelKey);
    if (it != kernels[i].end() &&
        !offset(r, *it, p, inference ? k.inferenceWorkspaceOffset : k.workspaceOffset))
      return false;
  }
  std::string path, message;
  if (!checkArenaPlan(m, path, message, kind))
    return r.fail(path, message);
  return true;
}

} // namespace

bool parseArenaPlan(Reader &r, const json &root, Manifest &m) {
  return parsePlanFields(r, root, m, ArenaPlanKind::Training, 3, "the memory plan") &&
         parsePlanFields(r, root, m, ArenaPlanKind::Inference, 5, "the inference memory plan");
}

} // namespace dmrt
