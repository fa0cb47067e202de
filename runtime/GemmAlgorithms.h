//===- GemmAlgorithms.h - cuBLASLt algorithm configurations -------*- C++ -*-===//
//
// The algorithms a tuner can time for one GemmRunner: the heuristic's top k
// (cublasLtMatmulAlgoGetHeuristic) and configurations enumerated from
// cublasLtMatmulAlgoGetIds (GemmRunner::enumerateAlgorithms, in
// GemmAlgorithms.cpp).
//
// Enumeration: for every algorithm id of the runner's compute / scale /
// A / B / C / D types, cublasLtMatmulAlgoInit, then the capabilities
// (CUBLASLT_ALGO_CAP_TILE_IDS, _STAGES_IDS, _SPLITK_SUPPORT,
// _REDUCTION_SCHEME_MASK, _CTA_SWIZZLING_SUPPORT) give candidate
// configurations (candidateConfigs: tile x stages x custom option
// (CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, at most 4) x cluster shape x split-k
// {1, 2, 4} with one supported reduction scheme x swizzle {0, 1}); the inner
// shape stays 0. Cluster shapes: cuBLASLt 13 has no capability that lists
// the shapes an algorithm supports, and cublasLtMatmulAlgoCheck refuses
// CUBLASLT_CLUSTER_SHAPE_AUTO for the algorithms that use clusters (sm_90
// kernels, seen on an H100 with cuBLASLt 13.1): an id the heuristic returned
// with a cluster shape gets AUTO, the heuristic's shapes and 1x1x1, 2x1x1,
// 1x2x1, 2x2x1 (heuristicClusterShapes); other ids AUTO alone.
// selectCandidates walks them round-robin over the ids and keeps those that
// cublasLtMatmulAlgoCheck accepts with a workspace within the runner's.
//
// The CPU pieces (names, descriptions, candidates, selection) need no GPU and
// are unit-tested (tests/unit/runtime/GemmAlgorithmsTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_GEMMALGORITHMS_H
#define DMRT_GEMMALGORITHMS_H

#include "runtime/RankCorrelation.h"
#include "runtime/format/GemmAlgoConfig.h"
#include "runtime/format/GemmDescriptor.h"

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dmrt {

/// Default cap of GemmRunner::enumerateAlgorithms (heuristic ones included).
constexpr int kDefaultMaxAlgorithms = 256;

/// Where an algorithm of the list comes from.
enum class GemmAlgoSource { Heuristic, Enumerated };

/// One algorithm to run: what GemmRunner::run takes, and what it is.
struct GemmAlgorithm {
  cublasLtMatmulAlgo_t algo{};
  GemmAlgoConfig config;
  size_t workspaceBytes = 0; // what cuBLASLt says it needs
  float waves = 0;           // cublasLtMatmulHeuristicResult_t::wavesCount
  GemmAlgoSource source = GemmAlgoSource::Enumerated;
  int heuristicRank = -1;    // position in the heuristic's list (Heuristic)
  std::string description;   // describeAlgorithm(config, workspaceBytes)
};

/// What the capabilities of one algorithm id allow (CUBLASLT_ALGO_CAP_*).
struct GemmAlgoCaps {
  std::vector<uint32_t> tiles, stages; // empty: UNDEFINED only
  bool splitK = false;
  uint32_t reductionMask = 0; // cublasLtReductionScheme_t bits
  bool swizzle = false;
  int32_t customOptionMax = 0; // options 0..customOptionMax
  /// Cluster shapes to try (cublasLtClusterShape_t; empty: AUTO alone).
  std::vector<uint16_t> clusterShapes;
};

/// What candidateConfigs varies.
struct GemmCandidateOptions {
  std::vector<int32_t> splitK{1, 2, 4};
  bool swizzle = true;     // also swizzle 1 where the algorithm supports it
  int32_t maxCustomOptions = 4; // custom options 0..min(max, this - 1)
};

/// Per algorithm id of one enumeration.
struct GemmIdStats {
  int32_t algoId = -1;
  int tiles = 0, stages = 0, clusterShapes = 0; // capability list sizes
  int32_t customOptionMax = 0;
  bool splitK = false, swizzle = false;
  uint32_t reductionMask = 0;
  int candidates = 0, kept = 0;
};

/// Counts of one enumeration.
struct GemmEnumStats {
  int heuristic = 0;  // heuristic results at the head of the list
  int algoIds = 0;    // ids from cublasLtMatmulAlgoGetIds
  int candidates = 0; // configurations built from their capabilities
  int checked = 0;    // cublasLtMatmulAlgoCheck calls
  int rejected = 0;   // check failed, or more workspace than the runner's
  int duplicates = 0; // same key as a heuristic result (not checked)
  int enumerated = 0; // kept, after the heuristic ones
  std::vector<GemmIdStats> ids; // enumerateAlgorithms: one per usable id
};

//===--- CPU pieces -------------------------------------------------------===//

/// "128x256" for CUBLASLT_MATMUL_TILE_128x256, "undefined" for 0,
/// "tile#N" for an id this cublasLt.h does not name.
std::string tileName(uint32_t tile);
/// "64x3", "128xAUTO", "undefined", "stages#N".
std::string stagesName(uint32_t stages);
/// "2x1x1", "auto", "cluster#N".
std::string clusterShapeName(uint32_t shape);
/// "none", "inplace", "compute-type", "output-type"; bits joined with '|';
/// "scheme#N" for unknown bits.
std::string reductionSchemeName(uint32_t scheme);
/// "0", "512KiB", "4MiB", "1000B": whole KiB / MiB where exact.
std::string bytesName(size_t bytes);

/// "algo=21 tile=128x128 stages=32x5 splitk=1 swizzle=0 ws=0": split-k > 1
/// adds its reduction ("splitk=2/compute-type"); a custom option, inner shape
/// or cluster shape other than the default is appended
/// ("custom=1 inner=4 cluster=2x1x1").
std::string describeAlgorithm(const GemmAlgoConfig &c, size_t workspaceBytes);

/// The reduction scheme used for split-k > 1 under `mask`: the first
/// supported of COMPUTE_TYPE (accumulates in fp32), INPLACE, OUTPUT_TYPE;
/// CUBLASLT_REDUCTION_SCHEME_NONE (0) when none is.
uint32_t pickReductionScheme(uint32_t mask);

/// The candidate configurations of algorithm `algoId`, in the order a
/// selection should try them: swizzle 0 before 1, then split-k in
/// `opt.splitK` order, then cluster shapes, custom options, stages, and
/// tiles fastest (so an id's first kept configurations differ in tile).
/// Tiles / stages / cluster shapes: the lists of `caps` (UNDEFINED / AUTO
/// when empty; duplicates dropped). Custom options 0..min(customOptionMax,
/// opt.maxCustomOptions - 1). Split-k > 1 only when caps.splitK and
/// pickReductionScheme(caps.reductionMask) != 0, with that scheme; split-k 1
/// uses NONE; values < 1 and repeats are ignored. Swizzle 1 only when
/// caps.swizzle and opt.swizzle.
std::vector<GemmAlgoConfig> candidateConfigs(int32_t algoId,
                                             const GemmAlgoCaps &caps,
                                             const GemmCandidateOptions &opt = {});

/// The cluster shapes to try for algorithm `algoId` given the heuristic's
/// results: empty (AUTO alone) unless one of them has this id and a cluster
/// shape other than AUTO; then AUTO, every shape of the heuristic's results
/// (any id, first-seen order), then 1x1x1, 2x1x1, 1x2x1, 2x2x1, without
/// repeats.
std::vector<uint16_t>
heuristicClusterShapes(int32_t algoId,
                       const std::vector<GemmAlgoConfig> &heuristic);

/// `configs` without any whose key (sameKey) equals an earlier one's or one
/// in `exclude`, in order.
std::vector<GemmAlgoConfig> dedupConfigs(const std::vector<GemmAlgoConfig> &configs,
                                         const std::vector<GemmAlgoConfig> &exclude = {});

/// Picks up to `maxCount` configurations from `perId` (one candidate list
/// per algorithm id), round-robin over the ids: each turn, every id that has
/// candidates left advances through its list to the next one that `accept`
/// takes and keeps it, so that a small cap still spans the ids; it gives up
/// its turn after `scanPerTurn` calls of `accept` (< 0: no limit), so that an
/// id whose candidates are mostly refused does not use up `maxChecks`.
/// Candidates whose key is in `exclude` or already kept are skipped without
/// calling `accept`. At most `maxChecks` calls of `accept` (< 0: no limit).
/// `stats` (optional): candidates, checked, rejected, duplicates, enumerated.
std::vector<GemmAlgoConfig>
selectCandidates(const std::vector<std::vector<GemmAlgoConfig>> &perId,
                 const std::vector<GemmAlgoConfig> &exclude, int maxCount,
                 const std::function<bool(const GemmAlgoConfig &)> &accept,
                 int maxChecks = -1, GemmEnumStats *stats = nullptr,
                 int scanPerTurn = -1);

/// The tile of CUBLASLT_MATMUL_TILE_<M>x<N> as rows x columns of D; false
/// for UNDEFINED and ids this cublasLt.h does not name.
bool tileShape(uint32_t tile, int &rows, int &cols);

/// The rates the cost model prices an algorithm with.
struct GemmModelRates {
  int sms = 0;                  ///< SMs of the GPU
  double flopsPerSm = 0;        ///< flop/s one SM sustains (a measured GEMM rate / sms)
  double feedBytesPerSm = 0;    ///< operand bytes/s one SM is fed (the L2 copy rate / sms)
  double reduceBytes = 0;       ///< bytes/s of split-k's fp32 reduction (the copy rate)
  int elementBytes = 2;         ///< of the operands
};

/// The tuner's analytic cost model of one algorithm of GEMM `g` (m x n x k,
/// batchCount): its tiles (ceil(m / tile rows) x ceil(n / tile columns) x
/// batch x split-k) run in `waves` (cuBLASLt's wavesCount; when <= 0, one
/// tile per SM at a time), ceil(waves) of them, the tiles of one wave
/// sharing their SM; each tile takes the longer of its flop (2 x rows x
/// columns x ceil(k / split-k)) at flopsPerSm and its operand panels
/// ((rows + columns) x ceil(k / split-k) x elementBytes) at feedBytesPerSm
/// (when > 0). Split-k > 1 adds its reduction: m x n x batch x split-k fp32
/// partials written and read at reduceBytes. Microseconds; < 0 when the tile
/// is unknown or a rate missing.
double modelAlgorithmUs(const GemmDescriptor &g, const GemmAlgoConfig &c, double waves,
                        const GemmModelRates &rates);

/// The entries of a sweep a tuner pruning to `keep` measures: entry 0 (the
/// heuristic's best, the step's default) and the keep - 1 others with the
/// lowest `modelUs` (ties: the earlier entry; entries the model cannot price,
/// modelUs < 0, after every priced one). Every entry when keep <= 0 or keep
/// >= modelUs.size(). Indices ascending.
std::vector<size_t> pruneByModel(const std::vector<double> &modelUs, int keep);


//===--- cuBLASLt algo structure (no GPU work) ----------------------------===//

/// Reads the CUBLASLT_ALGO_CONFIG_* attributes of `algo`; false (and `why`)
/// when cuBLASLt refuses one.
bool readAlgoConfig(const cublasLtMatmulAlgo_t &algo, GemmAlgoConfig &out,
                    std::string &why);
/// Sets tile, stages, split-k, reduction, swizzle, custom option, and the
/// inner / cluster shapes when not 0, on an algo from cublasLtMatmulAlgoInit
/// (whose id must be c.algoId).
bool applyAlgoConfig(cublasLtMatmulAlgo_t &algo, const GemmAlgoConfig &c,
                     std::string &why);

} // namespace dmrt

#endif // DMRT_GEMMALGORITHMS_H
