//===- ManifestVersion4Reader.cpp - Read version 4's fields ---------------===//
//
// Part of the manifest reader (ManifestReader.cpp calls parseCubinIntegrity
// last): each kernel's `cubin_bytes` (a positive integer) and `cubin_fnv1a64`
// (16 hex digits, runtime/format/Checksum.h), and each argument's `init`
// ({"mean": number, "range": number, "max": integer >= 1}), required from
// version 4 on and errors before it. The cubin files themselves are checked
// by loadBundle (runtime/Bundle.h), which knows the bundle directory.
//
//===----------------------------------------------------------------------===//
#include "runtime/format/Checksum.h"
#include "runtime/format/JsonReader.h"
#include "runtime/format/Manifest.h"

namespace dmrt {

namespace {

bool parseInit(Reader &r, const json &root, Manifest &m) {
  const json &tensors = root["tensors"];
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string p = Reader::index("tensors", i);
    BundleTensor &t = m.tensors[i];
    auto it = tensors[i].find("init");
    bool argument = isArgumentRole(t.role);
    if (it == tensors[i].end()) {
      if (m.version >= 4 && argument)
        return r.fail(p + ".init", std::string("missing field (required on ") +
                                       tensorRoleName(t.role) + " tensors from version 4)");
      continue;
    }
    if (m.version < 4)
      return r.fail(p + ".init", "not in bundle version " + std::to_string(m.version) +
                                     " (argument initialisation needs version 4)");
    if (!argument)
      return r.fail(p + ".init", std::string("only arguments (input, param, grad_output) "
                                             "have one; this tensor is ") +
                                     tensorRoleName(t.role));
    std::string ip = p + ".init";
    if (!r.object(*it, ip, {"mean", "range", "max"}) ||
        !r.number(*it, ip, "mean", t.initMean) || !r.number(*it, ip, "range", t.initRange) ||
        !r.integer(*it, ip, "max", t.initMax, 1))
      return false;
    t.hasInit = true;
  }
  return true;
}

} // namespace

bool parseCubinIntegrity(Reader &r, const json &root, Manifest &m) {
  if (!parseInit(r, root, m))
    return false;
  const json &kernels = root["kernels"];
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string p = Reader::index("kernels", i);
    const json &o = kernels[i];
    if (m.version < 4) {
      for (const char *key : {"cubin_bytes", "cubin_fnv1a64"})
        if (o.find(key) != o.end())
          return r.fail(Reader::join(p, key),
                        "not in bundle version " + std::to_string(m.version) +
                            " (cubin sizes and checksums need version 4)");
      continue;
    }
    std::string hex;
    if (!r.integer(o, p, "cubin_bytes", m.kernels[i].cubinBytes, 1) ||
        !r.str(o, p, "cubin_fnv1a64", hex))
      return false;
    if (!parseChecksumHex(hex, m.kernels[i].cubinChecksum))
      return r.fail(p + ".cubin_fnv1a64",
                    "expected 16 hex digits (FNV-1a 64 of the cubin), got \"" + hex + "\"");
  }
  return true;
}

} // namespace dmrt
