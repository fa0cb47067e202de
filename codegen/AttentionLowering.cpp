//===- AttentionLowering.cpp - a fused attention dm.kernel -> its kernel ---===//
//
// Reads what dm-fuse-attention put in the region (the scores contraction, its
// masks, the dropout, the log-sum-exp or its use) and the kernel's operand
// and result types (the physical layouts, after dm-default-layouts), fills
// the MLIR-free dmcgen::AttentionProblem and emits the kernel of
// codegen/attention for it. Nothing here is per model: the dims come from
// the scores contraction's iteration space.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelEmitter.h"
#include "codegen/KernelSchedule.h"

#include "codegen/attention/AttentionProblem.h"
#include "ir/InPlaceStack.h"
#include "ir/IterationSpace.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace dmc::codegen {
namespace {

llvm::Error fail(dm::KernelOp k, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "fused kernel '" + k.getName() + "': " + why);
}

dm::TensorType tensorOf(Value v) { return cast<dm::TensorType>(v.getType()); }

/// `v` through layout changes inside the region (dm.transpose, a view).
Value throughTranspose(Value v) {
  while (auto t = v.getDefiningOp<dm::TransposeOp>())
    v = t.getX();
  return v;
}

using dm::rowMajorStride;

/// What the lowering reads off the region.
struct Dims {
  char batch = 0, heads = 0, query = 0, key = 0, head = 0;
};

/// The strides of `v` over (batch, heads, row, head dim): by its own layout,
/// or, for a result written into an in-place stack (dm-stack-in-place), where
/// the stacked buffer keeps it (the slice's offset is the runtime's pointer).
dmcgen::AttentionStrides stridesOf(Value v, const Dims &d, char row) {
  auto t = tensorOf(v);
  std::optional<dm::InPlaceSlice> slice = dm::inPlaceSliceOf(v);
  auto stride = [&](char letter) -> int64_t {
    int pos = t.indexOf(letter);
    return pos < 0 ? 0 : slice ? slice->strides[pos] : rowMajorStride(t, letter);
  };
  return {stride(d.batch), stride(d.heads), stride(row), stride(d.head)};
}

std::optional<dmcgen::AttentionKernelKind> kindOf(dm::KernelOp k) {
  auto fused = k->getAttrOfType<StringAttr>(dm::kFusedAttr);
  if (!fused)
    return std::nullopt;
  if (fused.getValue() == "attention")
    return dmcgen::AttentionKernelKind::Forward;
  if (fused.getValue() == "attention_grad_kv")
    return dmcgen::AttentionKernelKind::GradKV;
  if (fused.getValue() == "attention_grad_q")
    return dmcgen::AttentionKernelKind::GradQ;
  return std::nullopt;
}

} // namespace

bool isFusedKernel(dm::KernelOp kernel) { return kernel->hasAttr(dm::kFusedAttr); }

/// The problem a fused attention kernel solves, read off its region and types.
static llvm::Expected<std::pair<dmcgen::AttentionProblem, dmcgen::AttentionKernelKind>>
attentionProblemOf(dm::KernelOp k) {
  using dmcgen::AttentionKernelKind;
  std::optional<AttentionKernelKind> kind = kindOf(k);
  if (!kind)
    return fail(k, "unknown dm.fused kind");
  Block &body = k.getBody().front();
  // The scores: the contraction whose result the masks and the softmax read.
  dm::ContractOp scores;
  dmcgen::AttentionProblem p;
  for (Operation &op : body) {
    if (auto c = dyn_cast<dm::ContractOp>(op); c && !scores)
      scores = c;
    else if (isa<dm::CausalMaskOp>(op))
      p.causal = true;
    else if (isa<dm::KeyPaddingMaskOp>(op))
      p.keyPadding = true;
  }
  if (!scores)
    return fail(k, "no scores contraction in the region");
  Dims d;
  for (unsigned n = 0; n < 2; ++n) {
    std::string mine = dm::privateDims(scores, n);
    if (mine.size() != 1)
      return fail(k, "the scores operand " + std::to_string(n) + " has private dims '" + mine +
                         "' (expected one position dim)");
  }
  // Operand 0 of the kernel is q, 1 is k (dm-fuse-attention's order).
  Value qArg = body.getArgument(0), kArg = body.getArgument(1);
  unsigned qSide = throughTranspose(scores.getLhs()) == qArg ? 0 : 1;
  if (throughTranspose(scores->getOperand(qSide)) != qArg ||
      throughTranspose(scores->getOperand(1 - qSide)) != kArg)
    return fail(k, "the scores do not read the kernel's inputs 0 (q) and 1 (k)");
  d.query = dm::privateDims(scores, qSide)[0];
  d.key = dm::privateDims(scores, 1 - qSide)[0];
  auto scoreType = tensorOf(scores.getResult());
  std::string batch;
  for (char c : scoreType.getNames())
    if (c != d.query && c != d.key)
      batch.push_back(c);
  for (char c : tensorOf(qArg).getNames())
    if (c != d.query && batch.find(c) == std::string::npos)
      d.head = c;
  if (batch.size() != 2 || !d.head)
    return fail(k, "the scores' batch dims '" + batch + "' are not two (batch, heads)");
  // With key padding, the lengths' dim is the batch; otherwise either order.
  d.batch = batch[0];
  d.heads = batch[1];
  Value lens;
  if (p.keyPadding) {
    lens = body.getArguments().back();
    char lensDim = tensorOf(lens).getNames()[0];
    d.batch = lensDim;
    d.heads = batch[0] == lensDim ? batch[1] : batch[0];
  }
  p.dtype = tensorOf(qArg).getElementType().isF16() ? dmrt::DType::F16 : dmrt::DType::BF16;
  p.B = scoreType.getSize(d.batch);
  p.H = scoreType.getSize(d.heads);
  p.Lq = scoreType.getSize(d.query);
  p.Lk = scoreType.getSize(d.key);
  p.D = tensorOf(qArg).getSize(d.head);
  p.scale = scores.getScale().convertToDouble();
  p.q = stridesOf(qArg, d, d.query);
  p.k = stridesOf(kArg, d, d.key);
  p.v = stridesOf(body.getArgument(2), d, d.key);
  Value lse, drow;
  if (*kind == AttentionKernelKind::Forward) {
    p.o = stridesOf(k.getResult(0), d, d.query);
    lse = k.getResult(1);
  } else if (*kind == AttentionKernelKind::GradQ) { // q, k, v, o, dO, lse -> dQ, Drow
    p.o = stridesOf(body.getArgument(3), d, d.query);
    p.dO = stridesOf(body.getArgument(4), d, d.query);
    lse = body.getArgument(5);
    p.dQ = stridesOf(k.getResult(0), d, d.query);
    drow = k.getResult(1);
  } else { // grad-kv: q, k, v, dO, lse, Drow -> dK, dV
    p.dO = stridesOf(body.getArgument(3), d, d.query);
    lse = body.getArgument(4);
    drow = body.getArgument(5);
    p.dK = stridesOf(k.getResult(0), d, d.key);
    p.dV = stridesOf(k.getResult(1), d, d.key);
  }
  auto rowStrides = [&](Value v) -> dmcgen::LseStrides {
    auto t = tensorOf(v);
    return {rowMajorStride(t, d.batch), rowMajorStride(t, d.heads), rowMajorStride(t, d.query)};
  };
  p.lse = rowStrides(lse);
  if (drow)
    p.drow = rowStrides(drow);
  // The dropout: drawn (dm.dropout), drawn and saved as keep bits (the
  // forward's dm.dropout_keep_bits) or read from them (the backward's
  // dm.dropout_apply_bits).
  auto draw = [&](double prob, int64_t id, StringRef order) {
    // The Philox index runs row-major over `order`, whatever the layout.
    auto ordered = scoreType.permutedTo(order);
    p.dropout = prob;
    p.dropoutId = static_cast<uint32_t>(id);
    p.dropoutStrides = {rowMajorStride(ordered, d.batch), rowMajorStride(ordered, d.heads),
                        rowMajorStride(ordered, d.query), rowMajorStride(ordered, d.key)};
  };
  auto saved = [&](Value bits, StringRef word) {
    auto t = tensorOf(bits);
    p.keepBits = true;
    p.bits = {rowMajorStride(t, d.batch), rowMajorStride(t, d.heads), rowMajorStride(t, d.query),
              rowMajorStride(t, word[0])};
  };
  for (Operation &op : body) {
    if (auto keep = dyn_cast<dm::DropoutKeepBitsOp>(op)) {
      draw(keep.getP().convertToDouble(), keep.getId(), keep.getOrder());
      saved(keep.getResult(), keep.getWord());
      break;
    }
    if (auto apply = dyn_cast<dm::DropoutApplyBitsOp>(op)) {
      p.dropout = apply.getP().convertToDouble();
      saved(apply.getBits(), apply.getWord());
      break;
    }
    if (auto drop = dyn_cast<dm::DropoutOp>(op)) // the forward's keep bits may follow
      draw(drop.getP().convertToDouble(), drop.getId(), drop.getOrder());
  }
  if (std::string why = dmcgen::validate(p); !why.empty())
    return fail(k, why);
  return std::make_pair(p, *kind);
}

namespace {
/// The library's default tiles for the head dim when they fit the target's
/// shared memory, else the first feasible candidate.
dmcgen::AttentionTiles defaultTilesFor(const dmcgen::AttentionProblem &p,
                                       dmcgen::AttentionKernelKind kind,
                                       const dmcgen::TileLimits &shared) {
  dmcgen::AttentionTiles def = dmcgen::defaultTiles(p, kind, shared);
  if (dmcgen::checkTiles(p, def, kind, shared).empty())
    return def;
  for (const dmcgen::TileCandidate &c : dmcgen::tileCandidates(p, kind, shared))
    if (c.rejected.empty())
      return c.tiles;
  return def; // none fits: checkTiles' reason reaches the user through the emitter
}

/// What the kernel's target offers its tiles: shared memory, and wgmma where
/// the kernels are compiled for sm_90a (not sm_90: `dmc compile --arch`).
dmcgen::TileLimits limitsOf(dm::KernelOp kernel) {
  return {targetOf(kernel).maxSharedPerBlock, archOf(kernel) == "sm_90a"};
}

/// The tiles of a configuration.
dmcgen::AttentionTiles tilesOf(const KernelConfig &c) {
  return {c.blockM, c.blockN, c.warps, c.wgmma, c.minBlocks};
}

} // namespace

KernelConfig withTiles(const dmcgen::AttentionTiles &t) {
  KernelConfig c;
  c.blockM = t.blockM;
  c.blockN = t.blockN;
  c.warps = t.warps;
  c.wgmma = t.wgmma;
  c.minBlocks = t.minBlocks;
  return c;
}

std::vector<KernelConfig> enumerateFusedConfigs(dm::KernelOp kernel,
                                                std::vector<std::string> *rejected) {
  auto problem = attentionProblemOf(kernel);
  if (!problem) {
    if (rejected)
      rejected->push_back(llvm::toString(problem.takeError()));
    else
      llvm::consumeError(problem.takeError());
    return {};
  }
  auto [p, kind] = *problem;
  // The default first, so that index 0 of a sweep is the default bundle's.
  dmcgen::TileLimits shared = limitsOf(kernel);
  dmcgen::AttentionTiles def = defaultTilesFor(p, kind, shared);
  std::vector<KernelConfig> all = {withTiles(def)};
  for (const dmcgen::TileCandidate &c : dmcgen::tileCandidates(p, kind, shared)) {
    if (!c.rejected.empty()) {
      if (rejected)
        rejected->push_back(withTiles(c.tiles).describe() + ": " + c.rejected);
    } else if (!(c.tiles == def)) {
      all.push_back(withTiles(c.tiles));
    }
  }
  return all;
}

KernelConfig defaultFusedConfig(dm::KernelOp kernel) {
  auto problem = attentionProblemOf(kernel);
  if (!problem) { // emitAttentionKernel reports the same error
    llvm::consumeError(problem.takeError());
    return {};
  }
  return withTiles(defaultTilesFor(problem->first, problem->second,
                                   limitsOf(kernel)));
}

std::string whyInfeasibleFused(dm::KernelOp kernel, const KernelConfig &config) {
  auto problem = attentionProblemOf(kernel);
  if (!problem)
    return llvm::toString(problem.takeError());
  return dmcgen::checkTiles(problem->first, tilesOf(config), problem->second, limitsOf(kernel));
}

llvm::Expected<KernelSchedule> scheduleAttention(dm::KernelOp k, const KernelConfig &config) {
  auto problem = attentionProblemOf(k);
  if (!problem)
    return problem.takeError();
  auto [p, kind] = *problem;
  dmcgen::TileLimits shared = limitsOf(k);
  dmcgen::AttentionTiles tiles =
      config.warps > 0 ? tilesOf(config) : defaultTilesFor(p, kind, shared);
  if (std::string why = dmcgen::checkTiles(p, tiles, kind, shared); !why.empty())
    return fail(k, "tiles " + withTiles(tiles).describe() + " are infeasible: " + why);
  dmcgen::AttentionLaunch launch = dmcgen::launchGeometry(p, tiles, kind);
  KernelSchedule s;
  s.launch.grid = launch.grid[0];
  s.launch.gridY = launch.grid[1];
  s.launch.gridZ = launch.grid[2];
  s.launch.blockX = int(launch.block[0]);
  s.launch.blockY = int(launch.block[1]);
  s.launch.sharedBytes = int(launch.sharedBytes);
  s.plan = AttentionSchedule{p, kind, tiles};
  return s;
}

EmittedKernel emitAttentionSchedule(dm::KernelOp k, const KernelSchedule &schedule,
                                    llvm::StringRef entry) {
  const AttentionSchedule &a = *schedule.attention();
  const dmcgen::AttentionProblem &p = a.problem;
  const dmcgen::AttentionTiles &tiles = a.tiles;
  EmittedKernel e;
  e.entry = entry.str();
  e.source = llvm::formatv("// dm.kernel \"{0}\": fused attention ({1}), B{2} H{3} Lq{4} Lk{5} "
                           "D{6}; tiles {7}x{8}, {9} warps{10}\n",
                           k.getName(), dmcgen::kernelKindName(a.kind), p.B, p.H, p.Lq, p.Lk,
                           p.D, tiles.blockM, tiles.blockN, tiles.warps,
                           tiles.wgmma ? ", wgmma" : "")
                 .str() +
             dmcgen::emitAttentionSource(p, tiles, a.kind, e.entry);
  applyLaunch(schedule.launch, entry, e);
  e.describe = withTiles(tiles).describe();
  return e;
}

llvm::Expected<EmittedKernel> emitAttentionKernel(dm::KernelOp k, const KernelConfig &config,
                                                  llvm::StringRef entry) {
  llvm::Expected<KernelSchedule> schedule = scheduleAttention(k, config);
  if (!schedule)
    return schedule.takeError();
  return emitAttentionSchedule(k, *schedule, entry);
}

} // namespace dmc::codegen
