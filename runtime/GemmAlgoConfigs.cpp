//===- GemmAlgoConfigs.cpp - cuBLASLt algorithm configurations (CPU) ------===//
//
// Names and descriptions of algorithm configurations, candidates from an
// algorithm's capabilities, and their selection: no cuBLASLt call, so all of
// it is unit-tested without a GPU (GemmAlgorithms.cpp talks to cuBLASLt).
//
//===----------------------------------------------------------------------===//
#include "runtime/GemmAlgorithms.h"
#include "runtime/GemmRunner.h"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <tuple>

namespace dmrt {

// GemmAlgoConfig (runtime/format, no cuBLASLt include) spells these as 0.
static_assert(CUBLASLT_MATMUL_TILE_UNDEFINED == 0 && CUBLASLT_MATMUL_STAGES_UNDEFINED == 0 &&
                  CUBLASLT_REDUCTION_SCHEME_NONE == 0 && CUBLASLT_CLUSTER_SHAPE_AUTO == 0,
              "GemmAlgoConfig's defaults are cuBLASLt's UNDEFINED / NONE / AUTO");

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

bool keyIn(const std::vector<GemmAlgoConfig> &list, const GemmAlgoConfig &c) {
  return std::any_of(list.begin(), list.end(),
                     [&](const GemmAlgoConfig &o) { return o.sameKey(c); });
}

} // namespace

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

bool tileShape(uint32_t tile, int &rows, int &cols) {
  std::string name = tileName(tile);
  size_t x = name.find('x');
  if (tile == CUBLASLT_MATMUL_TILE_UNDEFINED || x == std::string::npos)
    return false;
  char *end = nullptr;
  long r = std::strtol(name.c_str(), &end, 10);
  if (end != name.c_str() + x)
    return false;
  long c = std::strtol(name.c_str() + x + 1, &end, 10);
  if (*end != '\0' || r < 1 || c < 1)
    return false;
  rows = int(r);
  cols = int(c);
  return true;
}

double modelAlgorithmUs(const GemmDescriptor &g, const GemmAlgoConfig &c, double waves,
                        const GemmModelRates &r) {
  int tm = 0, tn = 0;
  if (!tileShape(c.tile, tm, tn) || r.sms < 1 || !(r.flopsPerSm > 0) || !(r.reduceBytes > 0))
    return -1;
  const int64_t splitK = std::max<int64_t>(1, c.splitK);
  const int64_t batch = std::max<int64_t>(1, g.batchCount);
  const double tiles = double(((g.m + tm - 1) / tm) * ((g.n + tn - 1) / tn) * batch * splitK);
  if (!(waves > 0))
    waves = tiles / r.sms;
  const double perSm = tiles / (double(r.sms) * waves); // tiles sharing an SM in a wave
  const double depth = double((g.k + splitK - 1) / splitK);
  double tileSeconds = 2.0 * tm * tn * depth / r.flopsPerSm;
  if (r.feedBytesPerSm > 0)
    tileSeconds = std::max(tileSeconds, double(tm + tn) * depth * r.elementBytes /
                                            r.feedBytesPerSm);
  double us = std::ceil(waves) * perSm * tileSeconds * 1e6;
  if (splitK > 1) // fp32 partials written, then read by the reduction
    us += 2.0 * double(g.m) * double(g.n) * double(batch) * double(splitK) * 4.0 /
          r.reduceBytes * 1e6;
  return us;
}

std::vector<size_t> pruneByModel(const std::vector<double> &modelUs, int keep) {
  std::vector<size_t> all(modelUs.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  if (keep <= 0 || size_t(keep) >= all.size())
    return all;
  std::vector<size_t> rest(all.begin() + 1, all.end());
  auto key = [&](size_t i) { return modelUs[i] < 0 ? INFINITY : modelUs[i]; };
  std::stable_sort(rest.begin(), rest.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<size_t> kept = {0};
  kept.insert(kept.end(), rest.begin(), rest.begin() + (keep - 1));
  std::sort(kept.begin(), kept.end());
  return kept;
}


} // namespace dmrt
