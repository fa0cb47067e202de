//===- LayerFixture.h - A tiny version-4 bundle on disk for runtime tests -===//
//
// tiny.dmlib: x[16,8] -> k2(x, wa) -> h -> k0(h, wb) -> y (forward);
// k1(dy, h) -> x.grad (backward). wa and wb are parameters stored as one
// stacked buffer t3[2,8,8]; h is the one arena tensor (a saved activation).
// The cubins are fake bytes with correct sizes and checksums: everything up
// to the device passes, nothing can launch. manifest() gives the manifest to
// edit; write() puts a (possibly edited) bundle in a fresh directory.
// manifestV5() is the same layer as version 5 with a backward-only
// intermediate g (k1 also writes it): the training arena holds h and g
// (512 bytes), the inference arena only h (256 bytes).
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_UNIT_RUNTIME_LAYERFIXTURE_H
#define DMC_TESTS_UNIT_RUNTIME_LAYERFIXTURE_H

#include "runtime/format/Checksum.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace layerfixture {

using json = nlohmann::json;

inline std::string cubinBytes(int k) { return "fake cubin " + std::to_string(k) + " ....."; }

inline json tensor(int id, const char *name, const char *role, std::vector<int> shape,
                   json alias, json arena, bool init) {
  int64_t n = 1;
  for (int s : shape)
    n *= s;
  std::string dims = std::string("abcd").substr(0, shape.size());
  json t = {{"id", id},     {"name", name},  {"role", role},    {"dims", dims},
            {"shape", shape}, {"dtype", "bf16"}, {"bytes", n * 2}, {"alias", alias},
            {"arena", arena}};
  if (init)
    t["init"] = {{"mean", 0.0}, {"range", 1.0}, {"max", 1}};
  return t;
}

inline json kernel(int id, const char *phase, std::vector<int> in, std::vector<int> out) {
  std::string c = cubinBytes(id);
  return {{"id", id}, {"name", "k" + std::to_string(id)}, {"entry", "k" + std::to_string(id)},
          {"cubin", "kernels/k" + std::to_string(id) + ".cubin"},
          {"source", "kernels/k" + std::to_string(id) + ".cu"},
          {"grid", {1, 1, 1}}, {"block", {32, 1, 1}}, {"shared_bytes", 0},
          {"workspace_bytes", 0}, {"config", "c"}, {"phase", phase}, {"inputs", in},
          {"outputs", out}, {"flop", 0}, {"bytes", 0}, {"cubin_bytes", c.size()},
          {"cubin_fnv1a64", dmrt::checksumHex(dmrt::fnv1a64(c.data(), c.size()))}};
}

inline json manifest() {
  json n = nullptr;
  return {{"format", "dmc-bundle"}, {"version", 4}, {"model", "tiny"}, {"arch", "sm_90a"},
          {"nvrtc", "13.0"}, {"arena_bytes", 256},
          {"tensors",
           {tensor(0, "x", "input", {16, 8}, n, n, true),
            tensor(1, "wa", "param", {8, 8}, {{"of", 3}, {"offset", 0}}, n, true),
            tensor(2, "wb", "param", {8, 8}, {{"of", 3}, {"offset", 64}}, n, true),
            tensor(3, "t3", "intermediate", {2, 8, 8}, n, n, false),
            tensor(4, "h", "intermediate", {16, 8}, n, 0, false),
            tensor(5, "y", "output", {16, 8}, n, n, false),
            tensor(6, "dy", "grad_output", {16, 8}, n, n, true),
            tensor(7, "x.grad", "grad", {16, 8}, n, n, false)}},
          {"kernels",
           {kernel(0, "forward", {4, 2}, {5}), kernel(1, "backward", {6, 4}, {7}),
            kernel(2, "forward", {0, 1}, {4})}},
          {"contractions", json::array()},
          {"steps",
           {{{"kind", "kernel"}, {"id", 2}}, {{"kind", "kernel"}, {"id", 0}},
            {{"kind", "kernel"}, {"id", 1}}}}};
}

inline json manifestV5() {
  json m = manifest();
  m["version"] = 5;
  m["arena_bytes"] = 512;
  m["inference_arena_bytes"] = 256;
  for (json &t : m["tensors"])
    t["inference_arena"] = t["arena"];
  m["tensors"].push_back(tensor(8, "g", "intermediate", {16, 8}, nullptr, 256, false));
  m["tensors"].back()["inference_arena"] = nullptr;
  m["kernels"][1]["outputs"] = {7, 8};
  return m;
}

/// Writes `m` and the cubins into a new directory; returns its path.
inline std::string write(const json &m, const std::string &manifestText = "") {
  static std::atomic<int> counter{0};
  std::string dir = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : std::string("/tmp")) +
                    "/dmrt-layer-" + std::to_string(getpid()) + "-" +
                    std::to_string(counter++) + ".dmlib";
  ::mkdir(dir.c_str(), 0755);
  ::mkdir((dir + "/kernels").c_str(), 0755);
  std::ofstream(dir + "/manifest.json") << (manifestText.empty() ? m.dump(2) : manifestText);
  for (int k = 0; k < 3; ++k)
    std::ofstream(dir + "/kernels/k" + std::to_string(k) + ".cubin", std::ios::binary)
        << cubinBytes(k);
  return dir;
}

} // namespace layerfixture

#endif // DMC_TESTS_UNIT_RUNTIME_LAYERFIXTURE_H
