//===- GemmAlgoConfig.h - A cuBLASLt algorithm as data ------------*- C++ -*-===//
//
// The configuration of one cuBLASLt matmul algorithm (its
// CUBLASLT_ALGO_CONFIG_* attributes) and its one text form, which the tuner
// writes into the tuning database, `dmc compile --db` copies into
// config.json and the manifest (a contraction's `algorithm`), and the
// runtime turns back into a cublasLtMatmulAlgo_t (runtime/GemmAlgorithms.h):
//
//   cublaslt id=21 tile=18 stages=22 splitk=1 reduction=0 swizzle=0 custom=0 inner=0 cluster=0
//
// Every field present, in this order, as the decimal values of cuBLASLt's
// enums (cublasLtMatmulTile_t, cublasLtMatmulStages_t,
// cublasLtReductionScheme_t, cublasLtMatmulInnerShape_t,
// cublasLtClusterShape_t; 0 is UNDEFINED / NONE / AUTO). Plain C++17: no
// cuBLASLt include, so the compiler and the database read it too; names for
// people are describeAlgorithm's (runtime/GemmAlgorithms.h).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_GEMMALGOCONFIG_H
#define DMRT_FORMAT_GEMMALGOCONFIG_H

#include <cstdint>
#include <string>

namespace dmrt {

/// The configuration of one cuBLASLt algorithm (CUBLASLT_ALGO_CONFIG_*).
struct GemmAlgoConfig {
  int32_t algoId = -1;
  uint32_t tile = 0;   // cublasLtMatmulTile_t (0: UNDEFINED)
  uint32_t stages = 0; // cublasLtMatmulStages_t (0: UNDEFINED)
  int32_t splitK = 1;
  uint32_t reduction = 0; // cublasLtReductionScheme_t (0: NONE)
  uint32_t swizzle = 0;
  uint32_t customOption = 0;
  uint16_t innerShape = 0;   // cublasLtMatmulInnerShape_t
  uint16_t clusterShape = 0; // cublasLtClusterShape_t (0: AUTO)

  /// Every field equal.
  bool operator==(const GemmAlgoConfig &o) const;
  bool operator!=(const GemmAlgoConfig &o) const { return !(*this == o); }
  /// What the enumeration chooses (id, tile, stages, split-k, reduction,
  /// swizzle, custom option, cluster shape) is equal; the inner shape, which
  /// it leaves to cuBLASLt, is not compared. Two configurations with the
  /// same key count as one algorithm (dedupConfigs, selectCandidates).
  bool sameKey(const GemmAlgoConfig &o) const;
};

/// The value of a contraction's `algorithm` that lets cuBLASLt's heuristic
/// choose at run time (the default configuration).
inline constexpr const char *kHeuristicAlgorithm = "heuristic";

/// The text form above.
std::string serializeAlgorithm(const GemmAlgoConfig &c);

/// Parses the text form; false with `error` naming the field and what was
/// expected. Values must fit their fields (id >= 0, split-k >= 1).
bool parseAlgorithm(const std::string &text, GemmAlgoConfig &out, std::string &error);

} // namespace dmrt

#endif // DMRT_FORMAT_GEMMALGOCONFIG_H
