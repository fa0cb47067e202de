//===- AttentionProblem.cpp - Validation, tiles and launch geometry -------===//

#include "codegen/attention/AttentionProblem.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace dmcgen {

namespace {

constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxPositions = int64_t(1) << 30; // keeps q0 + blockM etc. in int
constexpr int kMinHeadDim = 16, kMaxHeadDim = 128;
/// f32 accumulators per thread above which the kernels would spill registers.
constexpr int kMaxAccumulators = 160;
/// The same for grad-kv with two row blocks a warp, whose smallest useful
/// tile (D 64, blockM 32: 192) compiles for sm_90a to 255 registers and a
/// 36-byte spill (`ptxas -v`), the price of half the shared-memory loads a
/// product; the tuner measures it against the one-block tiles.
constexpr int kMaxAccumulatorsTwoBlocks = 192;

std::string num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string checkTensor(const char *name, const AttentionStrides &s, const char *rowDim) {
  const std::string n = name;
  if (s.p != 1)
    return n + ".p stride is " + std::to_string(s.p) +
           ": the head-dim stride must be 1 (rows are loaded as 16-byte vectors)";
  const std::pair<const char *, int64_t> dims[] = {{"b", s.b}, {"h", s.h}, {rowDim, s.row}};
  for (const auto &[dim, stride] : dims) {
    if (stride < 0)
      return n + "." + dim + " stride is " + std::to_string(stride) + ": must be >= 0";
    if (stride % 8 != 0)
      return n + "." + dim + " stride is " + std::to_string(stride) +
             ": must be a multiple of 8 elements (rows start on 16-byte boundaries)";
  }
  return "";
}

/// Chunks (16 bytes) per stored row of D elements (device/Tile.h pitchChunks).
int64_t pitchChunks(int64_t D) { return D / 8 <= 4 ? D / 8 : (D / 8 + 7) / 8 * 8; }
int64_t tileBytes(int64_t rows, int64_t D) { return rows * pitchChunks(D) * 16; }

bool isTileSize(int v) { return v >= 16 && v <= 256 && v % 16 == 0; }

} // namespace

const char *kernelKindName(AttentionKernelKind kind) {
  switch (kind) {
  case AttentionKernelKind::Forward: return "forward";
  case AttentionKernelKind::GradKV: return "grad-kv";
  case AttentionKernelKind::GradQ: return "grad-q";
  }
  return "?";
}

std::string rowMajorStrides(const std::string &order, int64_t B, int64_t H, int64_t rows,
                            int64_t D, AttentionStrides &out) {
  if (order.size() != 4)
    return "layout '" + order + "' must name 4 dims: a permutation of b, h, j|k, p";
  AttentionStrides s;
  int64_t stride = 1;
  bool seen[4] = {false, false, false, false};
  for (size_t i = order.size(); i-- > 0;) {
    int dim;
    switch (order[i]) {
    case 'b': dim = 0; break;
    case 'h': dim = 1; break;
    case 'j': case 'k': dim = 2; break;
    case 'p': dim = 3; break;
    default:
      return "layout '" + order + "': unknown dim '" + std::string(1, order[i]) +
             "' (allowed: b, h, j or k, p)";
    }
    if (seen[dim])
      return "layout '" + order + "' names a dim twice";
    seen[dim] = true;
    const int64_t size[4] = {B, H, rows, D};
    int64_t *field[4] = {&s.b, &s.h, &s.row, &s.p};
    *field[dim] = stride;
    stride *= size[dim];
  }
  out = s;
  return "";
}

AttentionProblem contiguousProblem(dmrt::DType dtype, int64_t B, int64_t H, int64_t Lq,
                                   int64_t Lk, int64_t D) {
  AttentionProblem p;
  p.dtype = dtype;
  p.B = B, p.H = H, p.Lq = Lq, p.Lk = Lk, p.D = D;
  rowMajorStrides("bhjp", B, H, Lq, D, p.q);
  rowMajorStrides("bhkp", B, H, Lk, D, p.k);
  p.v = p.dK = p.dV = p.k;
  p.o = p.dO = p.dQ = p.q;
  p.lse = p.drow = {H * Lq, Lq, 1};
  p.scale = D > 0 ? 1.0 / std::sqrt((double)D) : 1.0;
  p.dropoutStrides = {H * Lq * Lk, Lq * Lk, Lk, 1};
  const int64_t words = keepBitsWords(p);
  p.bits = {H * Lq * words, Lq * words, words, 1};
  return p;
}

std::string validate(const AttentionProblem &p) {
  if (p.dtype != dmrt::DType::BF16 && p.dtype != dmrt::DType::F16)
    return std::string("dtype ") + dmrt::dtypeName(p.dtype) + " is not supported: " +
           dmrt::dtypeList({dmrt::DType::BF16, dmrt::DType::F16});
  const std::pair<const char *, int64_t> grid[] = {{"B", p.B}, {"H", p.H}};
  for (const auto &[name, v] : grid)
    if (v < 1 || v > kMaxGridYZ)
      return std::string(name) + " = " + std::to_string(v) + ": must be in [1, " +
             std::to_string(kMaxGridYZ) + "]";
  const std::pair<const char *, int64_t> lengths[] = {{"Lq", p.Lq}, {"Lk", p.Lk}};
  for (const auto &[name, v] : lengths)
    if (v < 1 || v > kMaxPositions)
      return std::string(name) + " = " + std::to_string(v) + ": must be in [1, " +
             std::to_string(kMaxPositions) + "]";
  if (p.D < kMinHeadDim || p.D > kMaxHeadDim || p.D % 16 != 0)
    return "head dim D = " + std::to_string(p.D) + " is not supported: a multiple of 16 in [" +
           std::to_string(kMinHeadDim) + ", " + std::to_string(kMaxHeadDim) + "]";
  const std::pair<const char *, const AttentionStrides *> queryMajor[] = {
      {"q", &p.q}, {"o", &p.o}, {"dO", &p.dO}, {"dQ", &p.dQ}};
  for (const auto &[name, s] : queryMajor)
    if (std::string e = checkTensor(name, *s, "j"); !e.empty())
      return e;
  const std::pair<const char *, const AttentionStrides *> keyMajor[] = {
      {"k", &p.k}, {"v", &p.v}, {"dK", &p.dK}, {"dV", &p.dV}};
  for (const auto &[name, s] : keyMajor)
    if (std::string e = checkTensor(name, *s, "k"); !e.empty())
      return e;
  const std::pair<const char *, int64_t> lse[] = {
      {"lse.b", p.lse.b},   {"lse.h", p.lse.h},   {"lse.j", p.lse.j},
      {"drow.b", p.drow.b}, {"drow.h", p.drow.h}, {"drow.j", p.drow.j}};
  for (const auto &[name, v] : lse)
    if (v < 0)
      return std::string(name) + " stride is " + std::to_string(v) + ": must be >= 0";
  if (!std::isfinite(p.scale) || p.scale == 0)
    return "scale = " + num(p.scale) + ": must be finite and nonzero";
  if (!(p.dropout >= 0 && p.dropout < 1))
    return "dropout p = " + num(p.dropout) + ": must be in [0, 1)";
  if (p.dropout > 0) {
    const std::pair<const char *, int64_t> ds[] = {{"dropoutStrides.b", p.dropoutStrides.b},
                                                   {"dropoutStrides.h", p.dropoutStrides.h},
                                                   {"dropoutStrides.j", p.dropoutStrides.j},
                                                   {"dropoutStrides.k", p.dropoutStrides.k}};
    for (const auto &[name, v] : ds)
      if (v < 0)
        return std::string(name) + " = " + std::to_string(v) + ": must be >= 0";
  }
  if (usesKeepBits(p)) {
    // The forward writes every word of every row: distinct (b, h, j, w) must
    // not share a word, so a dim of more than one element needs a stride.
    const struct {
      const char *name;
      int64_t stride, size;
    } bits[] = {{"bits.b", p.bits.b, p.B},
                {"bits.h", p.bits.h, p.H},
                {"bits.j", p.bits.j, p.Lq},
                {"bits.w", p.bits.w, keepBitsWords(p)}};
    for (const auto &d : bits) {
      if (d.stride < 0)
        return std::string(d.name) + " stride is " + std::to_string(d.stride) +
               ": must be >= 0 (keep-bit words, int32 units)";
      if (d.stride == 0 && d.size > 1)
        return std::string(d.name) + " stride is 0 but that dim has " + std::to_string(d.size) +
               " elements: the forward would write them to one keep-bit word";
    }
  }
  return "";
}

unsigned sharedBytes(const AttentionProblem &p, const AttentionTiles &t,
                     AttentionKernelKind kind) {
  int64_t bytes = 0;
  switch (kind) {
  case AttentionKernelKind::Forward:
    bytes = tileBytes(t.blockM, p.D) + 4 * tileBytes(t.blockN, p.D);
    break;
  case AttentionKernelKind::GradQ: // Q, dO, o; 2 stages of K, V; lse, Drow
    bytes = 3 * tileBytes(t.blockM, p.D) + 4 * tileBytes(t.blockN, p.D) + 2 * 4 * t.blockM;
    break;
  case AttentionKernelKind::GradKV: // K, V; 2 stages of Q, dO and of lse, Drow
    bytes = 2 * tileBytes(t.blockN, p.D) + 4 * tileBytes(t.blockM, p.D) + 4 * 4 * t.blockM;
    break;
  }
  if (t.wgmma) // a swizzle atom's slack: the wgmma tiles start at a 1024-byte boundary
    bytes += 1024;
  return (unsigned)bytes;
}

int hintedBlocks(AttentionKernelKind kind, int warps) {
  // Left to itself ptxas gave the causal forward with saved keep bits 128
  // registers and spills (gpt2-medium's: 0.233 ms on an H200 against 0.186
  // drawing only); asked for blocks of 168 registers it takes 148. The
  // backward kernels keep ptxas's choice.
  if (kind != AttentionKernelKind::Forward || warps <= 0)
    return 0;
  return blocksAtRegisters(warps, kUsualRegisters);
}

/// Registers a thread at least, asking for more blocks an SM: the f32
/// accumulators of a 64-wide head dim take 64.
constexpr int kMinRegistersForMoreBlocks = 128;

/// Blocks an SM the shared memory holds: the runtime reserves 1 KiB a block,
/// and an SM has that much more than one block may use (sm_80 to sm_90:
/// 164 KiB against 163, 228 against 227).
static int sharedBlocks(unsigned smem, const TileLimits &limits) {
  return int((limits.maxSharedBytes + 1024) / (smem + 1024));
}

int rowBlocksPerWarp(const AttentionTiles &t, AttentionKernelKind kind) {
  const bool keyMajor = kind == AttentionKernelKind::GradKV;
  const int owned = keyMajor ? t.blockN : t.blockM;
  if (t.warps <= 0)
    return 0;
  if (owned == 16 * t.warps)
    return 1;
  return keyMajor && owned == 32 * t.warps ? 2 : 0;
}

std::string checkTiles(const AttentionProblem &p, const AttentionTiles &t,
                       AttentionKernelKind kind, const TileLimits &limits) {
  if (std::string e = validate(p); !e.empty())
    return "invalid problem: " + e;
  if (t.wgmma) {
    if (!limits.wgmma)
      return "wgmma tiles need an sm_90a target (warpgroup MMA)";
    if (p.D != 64)
      return "wgmma tiles: head dim " + std::to_string(p.D) + ", must be 64 (128-byte rows)";
    // One warpgroup owns 64 rows of the block-major dim; the other is a
    // multiple of 64 (wgmma's N of the scores).
    const bool keyMajor = kind == AttentionKernelKind::GradKV;
    const int owned = keyMajor ? t.blockN : t.blockM, other = keyMajor ? t.blockM : t.blockN;
    if (owned != 64 || t.warps != 4 || other % 64 != 0)
      return "wgmma tiles " + std::to_string(t.blockM) + "x" + std::to_string(t.blockN) +
             " with " + std::to_string(t.warps) + " warps: " + kernelKindName(kind) +
             " needs " + (keyMajor ? "blockN" : "blockM") +
             " 64 with 4 warps (one warpgroup) and " + (keyMajor ? "blockM" : "blockN") +
             " a multiple of 64";
  }
  const std::pair<const char *, int> sizes[] = {{"blockM", t.blockM}, {"blockN", t.blockN}};
  for (const auto &[name, v] : sizes)
    if (!isTileSize(v))
      return std::string(name) + " = " + std::to_string(v) +
             ": must be a multiple of 16 in [16, 256] (mma tiles are 16 wide)";
  if (t.warps != 1 && t.warps != 2 && t.warps != 4 && t.warps != 8 && t.warps != 16)
    return "warps = " + std::to_string(t.warps) + ": must be 1, 2, 4, 8 or 16";
  const bool keyMajor = kind == AttentionKernelKind::GradKV;
  const int owned = keyMajor ? t.blockN : t.blockM;
  const int blocks = rowBlocksPerWarp(t, kind);
  if (blocks == 0)
    return std::string(keyMajor ? "blockN" : "blockM") + " = " + std::to_string(owned) +
           " with " + std::to_string(t.warps) + " warps: " + kernelKindName(kind) + " needs " +
           (keyMajor ? "blockN" : "blockM") + " == 16 * warps = " +
           std::to_string(16 * t.warps) +
           (keyMajor ? " or 32 * warps = " + std::to_string(32 * t.warps) +
                           " (each warp owns 16 or 32 keys)"
                     : std::string(" (each warp owns 16 queries)"));
  if (kind == AttentionKernelKind::Forward && usesKeepBits(p) && t.blockN % 32 != 0)
    return "blockN = " + std::to_string(t.blockN) +
           ": the forward writes keep bits, so blockN must be a multiple of 32 (each key tile "
           "writes whole 32-key words)";
  const unsigned smem = sharedBytes(p, t, kind);
  if (smem > limits.maxSharedBytes)
    return "shared memory " + std::to_string(smem) + " bytes exceeds the " +
           std::to_string(limits.maxSharedBytes) + "-byte limit";
  if (t.minBlocks < 0)
    return "min_blocks = " + std::to_string(t.minBlocks) + ": must be 0 (the kernel's own "
           "hint) or at least 1";
  if (t.minBlocks > 0) {
    const int threads = 32 * t.warps, registers = kRegistersPerSM / (threads * t.minBlocks);
    if (registers < kMinRegistersForMoreBlocks)
      return "min_blocks = " + std::to_string(t.minBlocks) + " blocks of " +
             std::to_string(threads) + " threads leave " + std::to_string(registers) +
             " registers a thread (at least " + std::to_string(kMinRegistersForMoreBlocks) +
             ")";
    // grad-kv's warpgroup tiles hold dK's and dV's accumulators and a half's
    // S^T and dPd^T: at 128 registers ptxas serializes their wgmma (C7512).
    if (kind == AttentionKernelKind::GradKV && t.wgmma && registers <= 128)
      return "min_blocks = " + std::to_string(t.minBlocks) + " blocks of " +
             std::to_string(threads) + " threads leave " + std::to_string(registers) +
             " registers a thread; grad-kv's warpgroup MMA needs more (ptxas serializes it)";
    if (sharedBlocks(smem, limits) < t.minBlocks)
      return "min_blocks = " + std::to_string(t.minBlocks) + " blocks of " +
             std::to_string(smem) + " bytes of shared memory do not fit an SM (" +
             std::to_string(sharedBlocks(smem, limits)) + " do)";
  }
  int accumulators = 0;
  switch (kind) {
  case AttentionKernelKind::Forward: accumulators = int(p.D / 2) + t.blockN / 2; break;
  case AttentionKernelKind::GradQ: accumulators = int(p.D / 2) + t.blockN; break;
  case AttentionKernelKind::GradKV: accumulators = blocks * (int(p.D) + t.blockM); break;
  }
  const int limit = blocks == 2 ? kMaxAccumulatorsTwoBlocks : kMaxAccumulators;
  if (accumulators > limit)
    return std::to_string(accumulators) + " f32 accumulators per thread (D = " +
           std::to_string(p.D) + (blocks == 2 ? ", two row blocks a warp" : "") + ") exceed " +
           std::to_string(limit) + ": registers would spill";
  return "";
}

AttentionTiles defaultTiles(const AttentionProblem &p, AttentionKernelKind kind,
                            const TileLimits &limits) {
  // sm_90a, head dim 64: warpgroup MMA. dmc-attention-kernel-test --bench
  // on one H200 (B8 H16 D64 bf16, two runs), wgmma 64x64x4 against the
  // mma.sync default: the forward 0.874-0.927x its time with dropout
  // (0.774-0.819x without), grad-q 0.676-0.692x with saved keep bits
  // (0.805-0.812x drawing), grad-kv (in halves of 32 queries) 0.905-0.932x
  // with saved keep bits at L512, 0.786-0.808x at L1024 causal, 0.854-0.859x
  // drawing, 0.778-0.809x without dropout.
  if (limits.wgmma && p.D == 64)
    return {64, 64, 4, true};
  switch (kind) {
  // D <= 64: the fastest of tileCandidates (dmc-attention-kernel-test --sweep,
  // B8 H16 L512 and L1024 causal, dropout 0.1): forward and grad-kv on an
  // H100 and again on an H200 with saved keep bits; grad-q 64x64 on the H200
  // (keep bits: 0.064 ms against 0.068 for 64x32 at L512, 0.148 against 0.155
  // at L1024 causal; within 1% of it without dropout). D > 64: not timed;
  // tiles that compile without register spills for sm_90a. blockN 64 also
  // suits a forward that writes keep bits (a multiple of 32).
  case AttentionKernelKind::Forward: return {64, 64, 4};
  case AttentionKernelKind::GradQ: return {64, 64, 4};
  case AttentionKernelKind::GradKV: return p.D <= 64 ? AttentionTiles{64, 64, 4}
                                                     : AttentionTiles{32, 64, 4};
  }
  return {};
}

std::vector<TileCandidate> tileCandidates(const AttentionProblem &p, AttentionKernelKind kind,
                                          const TileLimits &limits) {
  // Tiles with two row blocks a warp come after all others, so that the
  // indices of the one-block tiles stay what they were before those existed.
  std::vector<TileCandidate> out, twoBlocks;
  for (int m : {16, 32, 64, 128})
    for (int n : {16, 32, 64, 128})
      for (int w : {1, 2, 4, 8}) {
        AttentionTiles t{m, n, w};
        (rowBlocksPerWarp(t, kind) == 2 ? twoBlocks : out)
            .push_back({t, checkTiles(p, t, kind, limits)});
      }
  out.insert(out.end(), twoBlocks.begin(), twoBlocks.end());
  // The wgmma tiles last: listed (with why not) only where the target has
  // wgmma, so other targets' candidate indices stay as they were.
  if (limits.wgmma)
    for (int other : {64, 128}) {
      AttentionTiles t = kind == AttentionKernelKind::GradKV ? AttentionTiles{other, 64, 4, true}
                                                             : AttentionTiles{64, other, 4, true};
      out.push_back({t, checkTiles(p, t, kind, limits)});
    }
  // More blocks an SM than the kernel's own hint, where the registers and
  // the shared memory allow: the feasible tiles of at least 4 warps again,
  // last (smaller blocks are held back by the blocks an SM runs at most).
  for (size_t n = 0, end = out.size(); n < end; ++n) {
    if (!out[n].rejected.empty() || out[n].tiles.warps < 4)
      continue;
    AttentionTiles t = out[n].tiles;
    t.minBlocks = std::min(blocksAtRegisters(t.warps, kMinRegistersForMoreBlocks),
                           sharedBlocks(sharedBytes(p, t, kind), limits));
    if (t.minBlocks > blocksAtRegisters(t.warps, kUsualRegisters))
      out.push_back({t, checkTiles(p, t, kind, limits)});
  }
  return out;
}

AttentionLaunch launchGeometry(const AttentionProblem &p, const AttentionTiles &t,
                               AttentionKernelKind kind) {
  AttentionLaunch l;
  const bool keyMajor = kind == AttentionKernelKind::GradKV;
  const int64_t rows = keyMajor ? p.Lk : p.Lq, tile = keyMajor ? t.blockN : t.blockM;
  l.grid[0] = (unsigned)((rows + tile - 1) / tile);
  l.grid[1] = (unsigned)p.H;
  l.grid[2] = (unsigned)p.B;
  l.block[0] = (unsigned)(32 * t.warps);
  l.sharedBytes = sharedBytes(p, t, kind);
  return l;
}

std::vector<std::string> kernelInputs(const AttentionProblem &p, AttentionKernelKind kind) {
  std::vector<std::string> in = {"q", "k", "v"};
  if (kind == AttentionKernelKind::GradQ)
    in.insert(in.end(), {"o", "dO", "lse"});
  else if (kind == AttentionKernelKind::GradKV)
    in.insert(in.end(), {"dO", "lse", "drow"});
  if (kind != AttentionKernelKind::Forward) {
    if (usesKeepBits(p))
      in.push_back("bits");
  }
  if (p.keyPadding)
    in.push_back("lens");
  return in;
}

std::vector<std::string> kernelOutputs(const AttentionProblem &p, AttentionKernelKind kind) {
  switch (kind) {
  case AttentionKernelKind::Forward:
    return usesKeepBits(p) ? std::vector<std::string>{"o", "lse", "bits"}
                           : std::vector<std::string>{"o", "lse"};
  case AttentionKernelKind::GradKV: return {"dK", "dV"};
  case AttentionKernelKind::GradQ: return {"dQ", "drow"};
  }
  return {};
}

} // namespace dmcgen
