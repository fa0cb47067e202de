//===- GemmAlgorithms.cpp - cuBLASLt algorithm enumeration ---------------===//
//
// Reading and writing an algorithm's configuration attributes, and
// GemmRunner::enumerateAlgorithms (cublasLtMatmulAlgoGetIds / Init / Check)
// over the candidates GemmAlgoConfigs.cpp builds.
//
//===----------------------------------------------------------------------===//
#include "runtime/GemmAlgorithms.h"
#include "runtime/GemmRunner.h"

#include <algorithm>
#include <tuple>

namespace dmrt {

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

//===--- GemmRunner: one configuration, and the enumeration ---------------===//

bool GemmRunner::checkedAlgorithm(const GemmAlgoConfig &c, GemmAlgorithm &out,
                                  std::string &error) {
  if (!op_) {
    error = "GemmRunner::checkedAlgorithm before init";
    return false;
  }
  // cublasLtMatmulAlgoCheck looks at the bias / aux pointers' alignment.
  if (!bound_ && (bias_ || aux_) && workspace_ &&
      !bindPointers(workspace_, workspace_, error))
    return false;
  GemmAlgorithm a;
  cublasStatus_t s = cublasLtMatmulAlgoInit(handle_, kComputeType, kScaleType, typeA_, typeB_,
                                            typeD_, typeD_, c.algoId, &a.algo);
  if (s != CUBLAS_STATUS_SUCCESS) {
    error = std::string("cublasLtMatmulAlgoInit(id ") + std::to_string(c.algoId) +
            ") failed: " + cublasStatusName(s);
    return false;
  }
  if (!applyAlgoConfig(a.algo, c, error))
    return false;
  cublasLtMatmulHeuristicResult_t r{};
  s = cublasLtMatmulAlgoCheck(handle_, op_, la_, lb_, lc_, ld_, &a.algo, &r);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = r.state;
  if (s != CUBLAS_STATUS_SUCCESS) {
    error = std::string("cublasLtMatmulAlgoCheck refuses it: ") + cublasStatusName(s);
    return false;
  }
  if (r.workspaceSize > kWorkspaceBytes) {
    error = "it needs " + bytesName(r.workspaceSize) + " of workspace, more than the " +
            bytesName(kWorkspaceBytes) + " the runner has";
    return false;
  }
  a.config = c;
  a.workspaceBytes = r.workspaceSize;
  a.waves = r.wavesCount;
  a.source = GemmAlgoSource::Enumerated;
  a.description = describeAlgorithm(c, a.workspaceBytes);
  out = std::move(a);
  return true;
}

bool GemmRunner::useAlgorithm(const GemmAlgoConfig &c, std::string &error) {
  GemmAlgorithm a;
  if (!checkedAlgorithm(c, a, error)) {
    error = "algorithm \"" + describeAlgorithm(c, 0) + "\" for " + what_ + ": " + error;
    return false;
  }
  chosen_ = a;
  hasChosen_ = true;
  return true;
}

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
      if (!checkedAlgorithm(c, a, why))
        return false;
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
