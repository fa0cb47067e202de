//===- ManifestArenaReader.cpp - Read and check version 3's memory plan ---===//
//
// Part of the manifest reader (ManifestReader.cpp calls parseArenaPlan once
// tensors, kernels, contractions and steps are read): the plan's fields, then
// checkArenaPlan (runtime/format/ArenaPlan.h) on the whole manifest.
//
//===----------------------------------------------------------------------===//
#include "runtime/format/ArenaPlan.h"
#include "runtime/format/JsonReader.h"
#include "runtime/format/Manifest.h"

namespace dmrt {

namespace {

/// `key` of `o` must be absent before version 3.
bool absentBefore3(Reader &r, const Manifest &m, const json &o, const std::string &path,
                   const char *key) {
  if (m.version >= 3 || o.find(key) == o.end())
    return true;
  return r.fail(Reader::join(path, key), "not in bundle version " +
                                             std::to_string(m.version) +
                                             " (the memory plan needs version 3)");
}

/// An offset in bytes: a non-negative integer below 2^40.
bool offset(Reader &r, const json &v, const std::string &path, int64_t &out) {
  if (!r.integer(v, path, out, 0, "a non-negative integer (a byte offset in the arena)"))
    return false;
  if (out > (int64_t(1) << 40))
    return r.fail(path, "impossible offset " + std::to_string(out));
  return true;
}

} // namespace

bool parseArenaPlan(Reader &r, const json &root, Manifest &m) {
  const json &tensors = root["tensors"], &kernels = root["kernels"];
  if (m.version < 3) {
    if (!absentBefore3(r, m, root, "", "arena_bytes"))
      return false;
    for (size_t i = 0; i < tensors.size(); ++i)
      if (!absentBefore3(r, m, tensors[i], Reader::index("tensors", i), "arena"))
        return false;
    for (size_t i = 0; i < kernels.size(); ++i)
      if (!absentBefore3(r, m, kernels[i], Reader::index("kernels", i), "workspace_offset"))
        return false;
    return true;
  }
  const json *v;
  if (!r.field(root, "", "arena_bytes", v) || !offset(r, *v, "arena_bytes", m.arenaBytes))
    return false;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string p = Reader::index("tensors", i);
    if (!r.field(tensors[i], p, "arena", v))
      return false;
    if (!v->is_null() && !offset(r, *v, p + ".arena", m.tensors[i].arenaOffset))
      return false;
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string p = Reader::index("kernels", i) + ".workspace_offset";
    auto it = kernels[i].find("workspace_offset");
    if (it != kernels[i].end() && !offset(r, *it, p, m.kernels[i].workspaceOffset))
      return false;
  }
  std::string path, message;
  if (!checkArenaPlan(m, path, message))
    return r.fail(path, message);
  return true;
}

} // namespace dmrt
