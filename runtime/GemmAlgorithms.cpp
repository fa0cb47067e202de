//===- GemmAlgorithms.cpp - cuBLASLt algorithm configurations -------------===//
//
// Names and descriptions of algorithm configurations, candidates from an
// algorithm's capabilities and their selection (CPU only), and
// GemmRunner::enumerateAlgorithms (cublasLtMatmulAlgoGetIds / Init / Check).
//
//===----------------------------------------------------------------------===//
#include "runtime/GemmAlgorithms.h"
#include "runtime/GemmRunner.h"

#include <algorithm>
#include <tuple>

namespace dmrt {

namespace {

struct IdName {
  uint32_t id;
  const char *name;
};

// CublasLtNames.inc (generated from cublasLt.h by runtime/CMakeLists.txt):
// DMRT_MATMUL_TILE(enumerator, "name"), DMRT_MATMUL_STAGES(...),
// DMRT_CLUSTER_SHAPE(...).
#define DMRT_MATMUL_TILE(e, n) {static_cast<uint32_t>(e), n},
#define DMRT_MATMUL_STAGES(e, n)
#define DMRT_CLUSTER_SHAPE(e, n)
const IdName kTiles[] = {
    {0, "undefined"},
#include "CublasLtNames.inc"
};
#undef DMRT_MATMUL_TILE
#undef DMRT_MATMUL_STAGES
#define DMRT_MATMUL_TILE(e, n)
#define DMRT_MATMUL_STAGES(e, n) {static_cast<uint32_t>(e), n},
const IdName kStages[] = {
    {0, "undefined"},
#include "CublasLtNames.inc"
};
#undef DMRT_MATMUL_STAGES
#undef DMRT_CLUSTER_SHAPE
#define DMRT_MATMUL_STAGES(e, n)
#define DMRT_CLUSTER_SHAPE(e, n) {static_cast<uint32_t>(e), n},
const IdName kClusterShapes[] = {
    {0, "auto"},
#include "CublasLtNames.inc"
};
#undef DMRT_MATMUL_TILE
#undef DMRT_MATMUL_STAGES
#undef DMRT_CLUSTER_SHAPE

template <size_t N>
std::string lookup(const IdName (&table)[N], uint32_t id, const char *prefix) {
  for (const IdName &e : table)
    if (e.id == id)
      return e.name;
  return std::string(prefix) + "#" + std::to_string(id);
}

auto keyOf(const GemmAlgoConfig &c) {
  return std::make_tuple(c.algoId, c.tile, c.stages, c.splitK, c.reduction,
                         c.swizzle, c.customOption, c.clusterShape);
}

bool keyIn(const std::vector<GemmAlgoConfig> &list, const GemmAlgoConfig &c) {
  return std::any_of(list.begin(), list.end(),
                     [&](const GemmAlgoConfig &o) { return o.sameKey(c); });
}

} // namespace

bool GemmAlgoConfig::operator==(const GemmAlgoConfig &o) const {
  return sameKey(o) && innerShape == o.innerShape;
}

bool GemmAlgoConfig::sameKey(const GemmAlgoConfig &o) const {
  return keyOf(*this) == keyOf(o);
}

std::string tileName(uint32_t tile) { return lookup(kTiles, tile, "tile"); }
std::string stagesName(uint32_t stages) {
  return lookup(kStages, stages, "stages");
}
std::string clusterShapeName(uint32_t shape) {
  return lookup(kClusterShapes, shape, "cluster");
}

std::string reductionSchemeName(uint32_t scheme) {
  if (scheme == CUBLASLT_REDUCTION_SCHEME_NONE)
    return "none";
  static const IdName bits[] = {
      {CUBLASLT_REDUCTION_SCHEME_INPLACE, "inplace"},
      {CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, "compute-type"},
      {CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE, "output-type"}};
  std::string out;
  uint32_t rest = scheme;
  for (const IdName &b : bits)
    if (scheme & b.id) {
      out += (out.empty() ? "" : "|") + std::string(b.name);
      rest &= ~b.id;
    }
  if (rest)
    out += (out.empty() ? "" : "|") + std::string("scheme#") +
           std::to_string(rest);
  return out;
}

std::string bytesName(size_t bytes) {
  if (bytes == 0)
    return "0";
  if (bytes % (size_t(1) << 20) == 0)
    return std::to_string(bytes >> 20) + "MiB";
  if (bytes % 1024 == 0)
    return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

std::string describeAlgorithm(const GemmAlgoConfig &c, size_t workspaceBytes) {
  std::string s = "algo=" + std::to_string(c.algoId) + " tile=" +
                  tileName(c.tile) + " stages=" + stagesName(c.stages) +
                  " splitk=" + std::to_string(c.splitK);
  if (c.splitK > 1 || c.reduction != CUBLASLT_REDUCTION_SCHEME_NONE)
    s += "/" + reductionSchemeName(c.reduction);
  s += " swizzle=" + std::to_string(c.swizzle);
  if (c.customOption)
    s += " custom=" + std::to_string(c.customOption);
  if (c.innerShape)
    s += " inner=" + std::to_string(c.innerShape);
  if (c.clusterShape)
    s += " cluster=" + clusterShapeName(c.clusterShape);
  s += " ws=" + bytesName(workspaceBytes);
  return s;
}

uint32_t pickReductionScheme(uint32_t mask) {
  for (uint32_t s : {CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
                     CUBLASLT_REDUCTION_SCHEME_INPLACE,
                     CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE})
    if (mask & s)
      return s;
  return CUBLASLT_REDUCTION_SCHEME_NONE;
}

std::vector<GemmAlgoConfig> candidateConfigs(int32_t algoId,
                                             const GemmAlgoCaps &caps,
                                             const GemmCandidateOptions &opt) {
  auto unique = [](const auto &v) {
    std::vector<uint32_t> out;
    for (uint32_t x : v)
      if (std::find(out.begin(), out.end(), x) == out.end())
        out.push_back(x);
    if (out.empty())
      out.push_back(0); // UNDEFINED / AUTO: the algorithm picks
    return out;
  };
  std::vector<uint32_t> tiles = unique(caps.tiles), stages = unique(caps.stages),
                        clusters = unique(caps.clusterShapes);
  int32_t customs = std::max<int32_t>(
      1, std::min<int32_t>(caps.customOptionMax + 1, opt.maxCustomOptions));
  uint32_t scheme = pickReductionScheme(caps.reductionMask);
  std::vector<int32_t> splits;
  for (int32_t s : opt.splitK) {
    if (s < 1 || std::find(splits.begin(), splits.end(), s) != splits.end())
      continue;
    if (s > 1 && (!caps.splitK || scheme == CUBLASLT_REDUCTION_SCHEME_NONE))
      continue;
    splits.push_back(s);
  }
  std::vector<uint32_t> swizzles{0};
  if (caps.swizzle && opt.swizzle)
    swizzles.push_back(1);
  std::vector<GemmAlgoConfig> out;
  out.reserve(swizzles.size() * splits.size() * clusters.size() * customs *
              stages.size() * tiles.size());
  for (uint32_t sw : swizzles)
    for (int32_t sk : splits)
      for (uint32_t cl : clusters)
        for (int32_t cu = 0; cu < customs; ++cu)
          for (uint32_t st : stages)
            for (uint32_t t : tiles) {
              GemmAlgoConfig c;
              c.algoId = algoId;
              c.tile = t;
              c.stages = st;
              c.splitK = sk;
              c.reduction =
                  sk > 1 ? scheme : uint32_t(CUBLASLT_REDUCTION_SCHEME_NONE);
              c.swizzle = sw;
              c.customOption = static_cast<uint32_t>(cu);
              c.clusterShape = static_cast<uint16_t>(cl);
              out.push_back(c);
            }
  return out;
}

std::vector<uint16_t>
heuristicClusterShapes(int32_t algoId,
                       const std::vector<GemmAlgoConfig> &heuristic) {
  bool uses = std::any_of(heuristic.begin(), heuristic.end(),
                          [&](const GemmAlgoConfig &h) {
                            return h.algoId == algoId && h.clusterShape != 0;
                          });
  if (!uses)
    return {};
  std::vector<uint16_t> out{uint16_t(CUBLASLT_CLUSTER_SHAPE_AUTO)};
  auto add = [&](uint16_t s) {
    if (std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  };
  for (const GemmAlgoConfig &h : heuristic)
    add(h.clusterShape);
  for (cublasLtClusterShape_t s :
       {CUBLASLT_CLUSTER_SHAPE_1x1x1, CUBLASLT_CLUSTER_SHAPE_2x1x1,
        CUBLASLT_CLUSTER_SHAPE_1x2x1, CUBLASLT_CLUSTER_SHAPE_2x2x1})
    add(static_cast<uint16_t>(s));
  return out;
}

std::vector<GemmAlgoConfig> dedupConfigs(const std::vector<GemmAlgoConfig> &configs,
                                         const std::vector<GemmAlgoConfig> &exclude) {
  std::vector<GemmAlgoConfig> out;
  for (const GemmAlgoConfig &c : configs)
    if (!keyIn(exclude, c) && !keyIn(out, c))
      out.push_back(c);
  return out;
}

std::vector<GemmAlgoConfig>
selectCandidates(const std::vector<std::vector<GemmAlgoConfig>> &perId,
                 const std::vector<GemmAlgoConfig> &exclude, int maxCount,
                 const std::function<bool(const GemmAlgoConfig &)> &accept,
                 int maxChecks, GemmEnumStats *stats, int scanPerTurn) {
  GemmEnumStats local;
  GemmEnumStats &st = stats ? *stats : local;
  for (const auto &list : perId)
    st.candidates += static_cast<int>(list.size());
  std::vector<GemmAlgoConfig> kept;
  std::vector<size_t> next(perId.size(), 0);
  int checks = 0;
  bool progress = true;
  auto budgetLeft = [&] { return maxChecks < 0 || checks < maxChecks; };
  while (progress && static_cast<int>(kept.size()) < maxCount && budgetLeft()) {
    progress = false;
    for (size_t id = 0; id < perId.size(); ++id) {
      const auto &list = perId[id];
      int scanned = 0; // this turn's checks of this id
      while (next[id] < list.size() &&
             static_cast<int>(kept.size()) < maxCount && budgetLeft() &&
             (scanPerTurn < 0 || scanned < scanPerTurn)) {
        const GemmAlgoConfig &c = list[next[id]++];
        progress = true;
        if (keyIn(exclude, c) || keyIn(kept, c)) {
          ++st.duplicates;
          continue;
        }
        ++checks;
        ++scanned;
        ++st.checked;
        if (accept(c)) {
          kept.push_back(c);
          ++st.enumerated;
          break; // the next id's turn
        }
        ++st.rejected;
      }
    }
  }
  return kept;
}

//===--- cuBLASLt algo structure ------------------------------------------===//

namespace {
const char *configAttrName(cublasLtMatmulAlgoConfigAttributes_t a) {
  switch (a) {
  case CUBLASLT_ALGO_CONFIG_ID: return "ID";
  case CUBLASLT_ALGO_CONFIG_TILE_ID: return "TILE_ID";
  case CUBLASLT_ALGO_CONFIG_SPLITK_NUM: return "SPLITK_NUM";
  case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME: return "REDUCTION_SCHEME";
  case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING: return "CTA_SWIZZLING";
  case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION: return "CUSTOM_OPTION";
  case CUBLASLT_ALGO_CONFIG_STAGES_ID: return "STAGES_ID";
  case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID: return "INNER_SHAPE_ID";
  case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID: return "CLUSTER_SHAPE_ID";
  default: return "?";
  }
}
} // namespace

bool readAlgoConfig(const cublasLtMatmulAlgo_t &algo, GemmAlgoConfig &out,
                    std::string &why) {
  out = GemmAlgoConfig();
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, void *buf,
                 size_t size) {
    size_t written = 0;
    cublasStatus_t s =
        cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, buf, size, &written);
    if (s == CUBLAS_STATUS_SUCCESS)
      return true;
    why = std::string("cublasLtMatmulAlgoConfigGetAttribute(") +
          configAttrName(attr) + ") failed: " + cublasStatusName(s);
    return false;
  };
  return get(CUBLASLT_ALGO_CONFIG_ID, &out.algoId, sizeof(out.algoId)) &&
         get(CUBLASLT_ALGO_CONFIG_TILE_ID, &out.tile, sizeof(out.tile)) &&
         get(CUBLASLT_ALGO_CONFIG_STAGES_ID, &out.stages, sizeof(out.stages)) &&
         get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &out.splitK, sizeof(out.splitK)) &&
         get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &out.reduction,
             sizeof(out.reduction)) &&
         get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &out.swizzle,
             sizeof(out.swizzle)) &&
         get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &out.customOption,
             sizeof(out.customOption)) &&
         get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &out.innerShape,
             sizeof(out.innerShape)) &&
         get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &out.clusterShape,
             sizeof(out.clusterShape));
}

bool applyAlgoConfig(cublasLtMatmulAlgo_t &algo, const GemmAlgoConfig &c,
                     std::string &why) {
  auto set = [&](cublasLtMatmulAlgoConfigAttributes_t attr, const void *buf,
                 size_t size) {
    cublasStatus_t s = cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, buf, size);
    if (s == CUBLAS_STATUS_SUCCESS)
      return true;
    why = std::string("cublasLtMatmulAlgoConfigSetAttribute(") +
          configAttrName(attr) + ") failed: " + cublasStatusName(s);
    return false;
  };
  return set(CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile, sizeof(c.tile)) &&
         set(CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages, sizeof(c.stages)) &&
         set(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.splitK, sizeof(c.splitK)) &&
         set(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.reduction,
             sizeof(c.reduction)) &&
         set(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle, sizeof(c.swizzle)) &&
         set(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.customOption,
             sizeof(c.customOption)) &&
         (!c.innerShape ||
          set(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &c.innerShape,
              sizeof(c.innerShape))) &&
         (!c.clusterShape ||
          set(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.clusterShape,
              sizeof(c.clusterShape)));
}

//===--- GemmRunner::enumerateAlgorithms ----------------------------------===//

namespace {
/// A CUBLASLT_ALGO_CAP_* array of uint32_t (size query first).
bool capArray(const cublasLtMatmulAlgo_t &algo,
              cublasLtMatmulAlgoCapAttributes_t attr, std::vector<uint32_t> &out) {
  out.clear();
  size_t bytes = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &bytes) !=
      CUBLAS_STATUS_SUCCESS)
    return false;
  if (bytes == 0)
    return true;
  out.resize(bytes / sizeof(uint32_t));
  size_t written = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, out.data(),
                                        out.size() * sizeof(uint32_t),
                                        &written) != CUBLAS_STATUS_SUCCESS)
    return false;
  out.resize(written / sizeof(uint32_t));
  // "if no tile ids are supported use CUBLASLT_MATMUL_TILE_UNDEFINED": a
  // list of UNDEFINED alone means the same as an empty one.
  out.erase(std::remove(out.begin(), out.end(), 0u), out.end());
  return true;
}

template <typename T>
T capScalar(const cublasLtMatmulAlgo_t &algo,
            cublasLtMatmulAlgoCapAttributes_t attr) {
  T v{};
  size_t written = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, &v, sizeof(v), &written) !=
      CUBLAS_STATUS_SUCCESS)
    return T{};
  return v;
}
} // namespace

bool GemmRunner::enumerateAlgorithms(int maxCount, std::vector<GemmAlgorithm> &out,
                                     std::string &error, int heuristicCount,
                                     GemmEnumStats *stats) {
  out.clear();
  GemmEnumStats local;
  GemmEnumStats &st = stats ? *stats : local;
  st = GemmEnumStats();
  if (!op_) {
    error = "GemmRunner::enumerateAlgorithms before init";
    return false;
  }
  if (maxCount < 1) {
    error = "GemmRunner::enumerateAlgorithms: maxCount must be >= 1";
    return false;
  }
  // The heuristic's top k (binds stand-in bias / aux pointers if need be, as
  // cublasLtMatmulAlgoCheck also looks at their alignment). Finding none is
  // not an error here: the enumeration may still find some.
  std::vector<cublasLtMatmulHeuristicResult_t> heur;
  if (heuristicCount > 0 &&
      !algorithms(std::min(heuristicCount, maxCount), heur, error)) {
    if (!heur.empty() || status_ != CUBLAS_STATUS_NOT_SUPPORTED)
      return false;
    status_ = CUBLAS_STATUS_SUCCESS;
    error.clear();
  }
  if (heuristicCount <= 0 && !bound_ && (bias_ || aux_) && workspace_ &&
      !bindPointers(workspace_, workspace_, error))
    return false;
  std::vector<GemmAlgoConfig> heurConfigs;
  for (size_t i = 0; i < heur.size(); ++i) {
    GemmAlgorithm a;
    a.algo = heur[i].algo;
    a.workspaceBytes = heur[i].workspaceSize;
    a.waves = heur[i].wavesCount;
    a.source = GemmAlgoSource::Heuristic;
    a.heuristicRank = static_cast<int>(i);
    std::string why;
    if (!readAlgoConfig(a.algo, a.config, why)) {
      error = why + " (heuristic result " + std::to_string(i) + ") for " + what_;
      return false;
    }
    a.description = describeAlgorithm(a.config, a.workspaceBytes);
    heurConfigs.push_back(a.config);
    out.push_back(std::move(a));
  }
  st.heuristic = static_cast<int>(out.size());

  // Algorithm ids for these types, and each one's candidates.
  std::vector<int> ids(1024);
  int found = 0;
  if (!check(cublasLtMatmulAlgoGetIds(handle_, kComputeType, kScaleType, typeA_,
                                      typeB_, typeD_, typeD_,
                                      static_cast<int>(ids.size()), ids.data(),
                                      &found),
             "cublasLtMatmulAlgoGetIds", error))
    return false;
  ids.resize(std::max(found, 0));
  st.algoIds = static_cast<int>(ids.size());
  std::vector<std::vector<GemmAlgoConfig>> perId;
  for (int id : ids) {
    cublasLtMatmulAlgo_t algo;
    if (cublasLtMatmulAlgoInit(handle_, kComputeType, kScaleType, typeA_, typeB_,
                               typeD_, typeD_, id, &algo) != CUBLAS_STATUS_SUCCESS)
      continue; // an id cuBLASLt listed but cannot initialise: none of it
    GemmAlgoCaps caps;
    capArray(algo, CUBLASLT_ALGO_CAP_TILE_IDS, caps.tiles);
    capArray(algo, CUBLASLT_ALGO_CAP_STAGES_IDS, caps.stages);
    caps.splitK = capScalar<int32_t>(algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) != 0;
    caps.reductionMask =
        capScalar<uint32_t>(algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
    caps.swizzle =
        capScalar<uint32_t>(algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT) != 0;
    caps.customOptionMax =
        capScalar<int32_t>(algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
    caps.clusterShapes = heuristicClusterShapes(id, heurConfigs);
    perId.push_back(candidateConfigs(id, caps));
    GemmIdStats is;
    is.algoId = id;
    is.tiles = static_cast<int>(caps.tiles.size());
    is.stages = static_cast<int>(caps.stages.size());
    is.clusterShapes = static_cast<int>(caps.clusterShapes.size());
    is.customOptionMax = caps.customOptionMax;
    is.splitK = caps.splitK;
    is.swizzle = caps.swizzle;
    is.reductionMask = caps.reductionMask;
    is.candidates = static_cast<int>(perId.back().size());
    st.ids.push_back(is);
  }

  int room = maxCount - static_cast<int>(out.size());
  if (room > 0) {
    // Each accepted candidate's algo and check result, in acceptance order
    // (the order selectCandidates keeps them in).
    std::vector<GemmAlgorithm> accepted;
    auto accept = [&](const GemmAlgoConfig &c) {
      GemmAlgorithm a;
      std::string why;
      if (cublasLtMatmulAlgoInit(handle_, kComputeType, kScaleType, typeA_,
                                 typeB_, typeD_, typeD_, c.algoId,
                                 &a.algo) != CUBLAS_STATUS_SUCCESS ||
          !applyAlgoConfig(a.algo, c, why))
        return false;
      cublasLtMatmulHeuristicResult_t r{};
      if (cublasLtMatmulAlgoCheck(handle_, op_, la_, lb_, lc_, ld_, &a.algo,
                                  &r) != CUBLAS_STATUS_SUCCESS ||
          r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > kWorkspaceBytes)
        return false;
      a.config = c;
      a.workspaceBytes = r.workspaceSize;
      a.waves = r.wavesCount;
      a.source = GemmAlgoSource::Enumerated;
      a.description = describeAlgorithm(c, a.workspaceBytes);
      accepted.push_back(std::move(a));
      return true;
    };
    selectCandidates(perId, heurConfigs, room, accept, kMaxAlgoChecks, &st,
                     kAlgoChecksPerTurn);
    for (GemmAlgorithm &a : accepted) {
      for (GemmIdStats &is : st.ids)
        is.kept += is.algoId == a.config.algoId;
      out.push_back(std::move(a));
    }
  } else {
    for (const auto &list : perId)
      st.candidates += static_cast<int>(list.size());
  }
  if (out.empty()) {
    status_ = CUBLAS_STATUS_NOT_SUPPORTED;
    error = "neither cublasLtMatmulAlgoGetHeuristic nor the " +
            std::to_string(st.algoIds) +
            " ids of cublasLtMatmulAlgoGetIds gave an algorithm for " + what_;
    return false;
  }
  return true;
}

} // namespace dmrt
