//===- EmulatedConfig.h - An emitted kernel's config, read back for emulation -*- C++ -*-===//
//
// The host emulation runs the device templates with the constants of the
// source emitAttentionSource wrote: the structural ones (types, tile sizes,
// flags) are template arguments here and must equal the emitted ones; the
// values (sizes, strides, scale, dropout threshold) are parsed from the
// source's `static constexpr` lines into static members.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TESTS_ATTENTION_EMULATEDCONFIG_H
#define DMC_TESTS_ATTENTION_EMULATEDCONFIG_H

#include <cstdint>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>

namespace dmc::attention_test {

/// name -> literal of every `static constexpr T name = literal;` in `source`.
inline std::map<std::string, std::string> configConstants(const std::string &source) {
  std::map<std::string, std::string> out;
  static const std::regex line(R"(static constexpr \w+ (\w+) = ([^;]+);)");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), line);
       it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = (*it)[2];
  return out;
}

template <int D, int BM, int BN, int W, bool Bf16, bool Causal, bool Pad, bool Drop, bool KeyRuns,
          bool KeepBits = false, bool Wgmma = false>
struct EmulatedConfig {
  static constexpr bool kBf16 = Bf16;
  static constexpr int kD = D, kBlockM = BM, kBlockN = BN, kWarps = W;
  static constexpr bool kCausal = Causal, kKeyPadding = Pad, kDropout = Drop,
                        kDropoutKeyRuns = KeyRuns, kKeepBits = KeepBits, kWgmma = Wgmma;
  static inline int kB, kH, kLq, kLk, kBitsWords;
  static inline int64_t kQb, kQh, kQj, kKb, kKh, kKk, kVb, kVh, kVk, kOb, kOh, kOj, kDOb, kDOh,
      kDOj, kDQb, kDQh, kDQj, kDKb, kDKh, kDKk, kDVb, kDVh, kDVk, kLseB, kLseH, kLseJ, kDrowB, kDrowH, kDrowJ, kDropB,
      kDropH, kDropJ, kDropK, kBitsB, kBitsH, kBitsJ, kBitsW;
  static inline uint32_t kDropoutId, kDropThreshold;
  static inline float kKeepScale, kScale, kScaleLog2;

  /// Sets the values from `c`; "" when every structural constant matches,
  /// else the first mismatch or missing name.
  static std::string set(const std::map<std::string, std::string> &c) {
    auto get = [&](const char *name, std::string &out) {
      auto it = c.find(name);
      if (it == c.end())
        return false;
      out = it->second;
      return true;
    };
    std::string v;
    const std::pair<const char *, std::string> structure[] = {
        {"kBf16", Bf16 ? "true" : "false"}, {"kD", std::to_string(D)},
        {"kBlockM", std::to_string(BM)}, {"kBlockN", std::to_string(BN)},
        {"kWarps", std::to_string(W)}, {"kCausal", Causal ? "true" : "false"},
        {"kKeyPadding", Pad ? "true" : "false"}, {"kDropout", Drop ? "true" : "false"},
        {"kDropoutKeyRuns", KeyRuns ? "true" : "false"},
        {"kKeepBits", KeepBits ? "true" : "false"}, {"kWgmma", Wgmma ? "true" : "false"}};
    for (const auto &[name, want] : structure)
      if (!get(name, v) || v != want)
        return std::string(name) + " is '" + v + "', the emulation expects '" + want + "'";
    const std::pair<const char *, int *> ints[] = {
        {"kB", &kB}, {"kH", &kH}, {"kLq", &kLq}, {"kLk", &kLk}, {"kBitsWords", &kBitsWords}};
    for (const auto &[name, field] : ints) {
      if (!get(name, v))
        return std::string(name) + " missing";
      *field = (int)std::strtol(v.c_str(), nullptr, 10);
    }
    const std::pair<const char *, int64_t *> strides[] = {
        {"kQb", &kQb},     {"kQh", &kQh},     {"kQj", &kQj},     {"kKb", &kKb},
        {"kKh", &kKh},     {"kKk", &kKk},     {"kVb", &kVb},     {"kVh", &kVh},
        {"kVk", &kVk},     {"kOb", &kOb},     {"kOh", &kOh},     {"kOj", &kOj},
        {"kDOb", &kDOb},   {"kDOh", &kDOh},   {"kDOj", &kDOj},   {"kDQb", &kDQb},
        {"kDQh", &kDQh},   {"kDQj", &kDQj},   {"kDKb", &kDKb},   {"kDKh", &kDKh},
        {"kDKk", &kDKk},   {"kDVb", &kDVb},   {"kDVh", &kDVh},   {"kDVk", &kDVk},
        {"kLseB", &kLseB}, {"kLseH", &kLseH}, {"kLseJ", &kLseJ}, {"kDrowB", &kDrowB},
        {"kDrowH", &kDrowH}, {"kDrowJ", &kDrowJ}, {"kDropB", &kDropB},
        {"kDropH", &kDropH}, {"kDropJ", &kDropJ}, {"kDropK", &kDropK},
        {"kBitsB", &kBitsB}, {"kBitsH", &kBitsH}, {"kBitsJ", &kBitsJ}, {"kBitsW", &kBitsW}};
    for (const auto &[name, field] : strides) {
      if (!get(name, v))
        return std::string(name) + " missing";
      *field = std::strtoll(v.c_str(), nullptr, 10);
    }
    const std::pair<const char *, uint32_t *> words[] = {{"kDropoutId", &kDropoutId},
                                                         {"kDropThreshold", &kDropThreshold}};
    for (const auto &[name, field] : words) {
      if (!get(name, v))
        return std::string(name) + " missing";
      *field = (uint32_t)std::strtoul(v.c_str(), nullptr, 10);
    }
    const std::pair<const char *, float *> reals[] = {
        {"kKeepScale", &kKeepScale}, {"kScale", &kScale}, {"kScaleLog2", &kScaleLog2}};
    for (const auto &[name, field] : reals) {
      if (!get(name, v))
        return std::string(name) + " missing";
      *field = std::strtof(v.c_str(), nullptr); // hexadecimal, exact
    }
    return "";
  }
};

} // namespace dmc::attention_test

#endif // DMC_TESTS_ATTENTION_EMULATEDCONFIG_H
