//===- KernelScheduleTest.cpp - loop-nest kernels' schedules, as data -----===//
//
// On bert-large's fused training graph: the schedules the row and column
// emitters print, read as data (codegen/RowSchedule.h, ColumnSchedule.h),
// the guards of stacked inputs, the CUDA agreeing with them, and the fused
// attention kernels' schedules (KernelSchedule.h AttentionSchedule).
//
//===----------------------------------------------------------------------===//
#include "codegen/ColumnSchedule.h"
#include "codegen/KernelCostModel.h"
#include "codegen/KernelEmitter.h"
#include "codegen/KernelSchedule.h"
#include "codegen/RowSchedule.h"
#include "compiler/Driver.h"

#include "Examples.h"
#include "KernelLookup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace mlir;
using namespace dmc::codegen;

namespace {

class KernelSchedule : public ::testing::Test {
protected:
  void SetUp() override {
    auto m = dmc::buildGraph(ctx, std::string(DMC_EXAMPLES_DIR) + "/bert-large.json",
                             /*train=*/true, dmc::Stage::Fuse, dmc::PipelineOptions());
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    module = std::move(*m);
  }
  /// The schedule of kernel `name` at its default configuration (or `c`).
  RowSchedule schedule(llvm::StringRef name, std::optional<KernelConfig> c = std::nullopt) {
    dmc::dm::KernelOp k = lower(name);
    config = c ? *c : defaultConfig(space);
    return scheduleRowKernel(k, space, graph, config);
  }
  /// Kernel `name` lowered into `graph`, its space in `space`.
  dmc::dm::KernelOp lower(llvm::StringRef name) {
    dmc::dm::KernelOp k = dmc::test::kernelNamed(*module, name);
    space = spaceOf(k);
    graph = NodeGraph();
    EXPECT_FALSE(static_cast<bool>(lowerKernel(k, space, graph)));
    return k;
  }
  std::string source(llvm::StringRef name) {
    auto e = emitKernel(dmc::test::kernelNamed(*module, name), config, "k");
    EXPECT_TRUE(static_cast<bool>(e));
    return e ? e->source : std::string();
  }
  static std::string describe(const RowSchedule &r) {
    std::string out = "outer " + r.outer + " passes " + std::to_string(r.passes) + " per " +
                      std::to_string(r.per) + " vec " + std::to_string(r.vec) + " perRow " +
                      std::to_string(r.perRow) + " sums " + std::to_string(r.sums.size()) +
                      " fetch " + std::to_string(r.fetch.inputs.size()) + "@" +
                      std::to_string(r.fetch.sweep) + "\n";
    for (const PassPlan &p : r.passPlans) {
      out += "  pass: outerValues " + std::to_string(p.outerValues.size()) + " sweeps " +
             std::to_string(p.sweeps) + " reductions " + std::to_string(p.reductions.size()) +
             " nodes " + std::to_string(p.nodes.size()) + " cached-reads " +
             std::to_string(std::count(p.fromCache.begin(), p.fromCache.end(), true)) +
             " scalar " + std::to_string(p.scalarInputs.size()) + " vector " +
             std::to_string(p.vectorInputs.size()) + " sums " + std::to_string(p.sums.size()) +
             " stores " + std::to_string(p.stores.size()) + " draws " +
             std::to_string(p.draws.size()) + "\n";
    }
    return out;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  KernelSpace space;
  NodeGraph graph;
  KernelConfig config;
};

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST_F(KernelSchedule, LayerNormKeepsItsRowInRegistersBetweenPasses) {
  // bias + dropout + residual add + layer norm: the mean, then the variance,
  // then the normalized row; a row of 1024 in vectors of 8 over 128 threads
  // is one chunk per thread, so values computed in pass 0 are read back from
  // registers and the dropout mask is drawn once.
  RowSchedule r = schedule("bias_dropout_add_layernorm");
  SCOPED_TRACE(describe(r));
  ASSERT_EQ(r.passes, 3);
  EXPECT_TRUE(r.rowVec && r.caching);
  EXPECT_EQ(r.perRow, 1);
  const PassPlan &mean = r.passPlans[0], &variance = r.passPlans[1], &norm = r.passPlans[2];
  EXPECT_EQ(mean.reductions.size(), 1u);
  EXPECT_EQ(variance.reductions.size(), 1u);
  EXPECT_TRUE(norm.reductions.empty());
  EXPECT_EQ(mean.draws.size(), 1u);
  EXPECT_TRUE(variance.draws.empty() && norm.draws.empty());
  EXPECT_EQ(std::count(mean.fromCache.begin(), mean.fromCache.end(), true), 0);
  EXPECT_EQ(std::count(norm.fromCache.begin(), norm.fromCache.end(), true), 3);
  EXPECT_EQ(variance.outerValues.size(), 1u); // the mean, from pass 0's sum
  EXPECT_EQ(mean.vectorInputs.size(), 5u);
  EXPECT_TRUE(variance.vectorInputs.empty() && norm.vectorInputs.empty());
  EXPECT_EQ(mean.stores.size() + norm.stores.size(), 2u);
  // The CUDA says the same: a pass comment each, a block reduction per
  // reduction, a register array per cached node and its read-backs.
  std::string cuda = source("bias_dropout_add_layernorm");
  EXPECT_EQ(count(cuda, "// pass "), 3u);
  EXPECT_EQ(count(cuda, "dmcBlockReduce<"), 2u);
  for (size_t id = 0; id < r.cached.size(); ++id) {
    if (r.cached[id]) {
      EXPECT_NE(cuda.find("float c" + std::to_string(id) + "["), std::string::npos) << id;
    }
  }
  EXPECT_EQ(count(cuda, "dmrt::dropoutWords("), 1u);
}

TEST_F(KernelSchedule, LongRowsAreRecomputedInEachPass) {
  // One point per thread along a row of 1024 over 32 threads: 32 chunks per
  // thread, too many to keep; each pass recomputes from the inputs (the
  // re-reads hit the caches) and draws the mask again.
  KernelConfig c;
  c.tx = 1;
  c.ty = 32;
  RowSchedule r = schedule("bias_dropout_add_layernorm", c);
  SCOPED_TRACE(describe(r));
  ASSERT_TRUE(whyInfeasible(space, c).empty()) << whyInfeasible(space, c);
  ASSERT_EQ(r.passes, 3);
  EXPECT_EQ(r.perRow, 32);
  EXPECT_FALSE(r.caching);
  for (const PassPlan &p : r.passPlans) {
    EXPECT_EQ(std::count(p.fromCache.begin(), p.fromCache.end(), true), 0);
    EXPECT_EQ(p.draws.size(), 1u);
    EXPECT_FALSE(p.scalarInputs.empty());
  }
  std::string cuda = source("bias_dropout_add_layernorm");
  EXPECT_EQ(cuda.find("along this thread's row points"), std::string::npos); // no c<id>[]
  EXPECT_EQ(count(cuda, "dmrt::dropoutWord(seed"), 3u); // a draw per pass
}

TEST_F(KernelSchedule, ElementwiseKernelVectorsAlongAnOuterDim) {
  RowSchedule r = schedule("bias_gelu_dropout");
  SCOPED_TRACE(describe(r));
  EXPECT_TRUE(r.outerVec);
  EXPECT_FALSE(r.rowVec || r.reduces);
  ASSERT_EQ(r.passes, 1);
  EXPECT_TRUE(r.passPlans[0].reductions.empty());
  dmc::dm::KernelOp k = dmc::test::kernelNamed(*module, "bias_gelu_dropout");
  EXPECT_EQ(r.passPlans[0].stores.size(), k.getResultTypes().size());
  EXPECT_EQ(r.grid * config.tx * r.per * r.vec, space.outerPoints);
}

TEST_F(KernelSchedule, ColumnSumsFetchTheNextRowsAhead) {
  // The layer-norm backward with its parameter gradients: the rows' gamma and
  // beta gradients summed per thread (two column sums), four rows per thread,
  // and the first sweep's row inputs fetched a row group ahead.
  RowSchedule r = schedule("layernorm_dx_dropout_layernorm_dparams");
  SCOPED_TRACE(describe(r));
  EXPECT_EQ(r.sums.size(), 2u);
  EXPECT_GT(r.per, 1);
  EXPECT_EQ(r.fetch.sweep, 0);
  EXPECT_EQ(r.fetch.inputs.size(), 2u);
  EXPECT_EQ(r.passPlans[0].sums.size(), 2u);
  for (unsigned n : r.fetch.inputs)
    EXPECT_TRUE(llvm::is_contained(r.passPlans[0].vectorInputs, n)) << n;
  std::string cuda = source("layernorm_dx_dropout_layernorm_dparams");
  for (unsigned n : r.fetch.inputs)
    EXPECT_NE(cuda.find("pf" + std::to_string(n) + "["), std::string::npos) << n;
  for (int id : r.sums) // the thread's adds, one per column sum
    EXPECT_EQ(count(cuda, "sum" + std::to_string(id) + "[it * 8 + v] += "), 1u) << id;
}

TEST_F(KernelSchedule, StackSlicesAreGuardedLoads) {
  // The stacked q, k, v gradients with their bias sums: each slice input is
  // read only where the stacked dim has its index, a guard held as data
  // (NodeGraph::guardOf); the CUDA tests the same conditions.
  dmc::dm::KernelOp k = lower("stack_reduce_sum");
  config = defaultConfig(space); // the column emitter's
  std::set<int64_t> indices;
  char dim = 0;
  for (unsigned n = 0; n < k.getInputs().size(); ++n)
    if (std::optional<LoadGuard> guard = graph.guardOf(n)) {
      dim = dim ? dim : guard->dim;
      EXPECT_EQ(guard->dim, dim);
      indices.insert(guard->index);
      EXPECT_EQ(graph.sliceOf(n), std::make_pair(guard->dim, guard->index));
    }
  EXPECT_EQ(indices, (std::set<int64_t>{0, 1, 2}));
  std::string cuda = source("stack_reduce_sum");
  for (int64_t i : indices)
    EXPECT_NE(cuda.find(LoadGuard{dim, i}.text()), std::string::npos) << i;
  // An input read under two conditions is read unconditionally.
  NodeGraph g;
  g.loadGuards[4] = LoadGuard{'s', 1};
  EXPECT_EQ(g.guardOf(4)->text(), "i_s == 1");
  g.unguardedLoads.insert(4);
  EXPECT_FALSE(g.guardOf(4).has_value());
  EXPECT_EQ(g.sliceOf(4), std::make_pair(char(0), int64_t(-1)));
}

TEST_F(KernelSchedule, ColumnSumFetchesRowsAheadAndMeetsAcrossBlocks) {
  // The FFN's gelu gradient with dropout and its bias gradient: lanes along
  // u, each tile's 4096 rows split over 8 blocks of 32 threads per column, so
  // 16 rows per thread; both inputs fetched 2 rows ahead; the last block of a
  // tile adds the 8 partials (an arrival counter in the workspace).
  dmc::dm::KernelOp k = lower("dropout_dgelu_reduce_sum");
  config = defaultConfig(space);
  ASSERT_TRUE(isColumnConfig(config)) << config.describe();
  ColumnSchedule c = scheduleColumnKernel(k, space, graph, config);
  EXPECT_EQ(c.laneDim, 'u');
  EXPECT_EQ(c.outer.back(), 'u');
  EXPECT_EQ(c.rows * c.split, space.rowPoints);
  EXPECT_EQ(c.iters, c.rows / config.ty);
  EXPECT_EQ(c.depth, kFetchDepth);
  EXPECT_EQ(c.reads, (std::vector<ColumnRead>{ColumnRead::Fetched, ColumnRead::Fetched}));
  EXPECT_TRUE(c.allLinear && c.sharedSlots.empty());
  EXPECT_EQ(c.reductions.size(), 1u);
  EXPECT_EQ(c.rowStores.size(), 1u);   // the input gradient
  EXPECT_EQ(c.outerStores.size(), 1u); // the bias gradient
  EXPECT_EQ(c.draws.size(), 1u);       // the dropout mask drawn again
  std::string cuda = source("dropout_dgelu_reduce_sum");
  for (unsigned n : c.fetched)
    EXPECT_NE(cuda.find("dmcFetchVec<8>(pf" + std::to_string(n) + "["), std::string::npos);
  EXPECT_EQ(count(cuda, "atomicAdd(&arrived"), c.split > 1 ? 1u : 0u);
  EXPECT_NE(cuda.find("ROWS = " + std::to_string(c.rows)), std::string::npos);
}

TEST_F(KernelSchedule, StackSlicesShareTheirFetchSlots) {
  // The q, k, v gradients stacked with their bias sums: a point reads one of
  // the three slices, so one set of slots and one conversion serve them all.
  dmc::dm::KernelOp k = lower("stack_reduce_sum");
  config = defaultConfig(space);
  ASSERT_TRUE(isColumnConfig(config)) << config.describe();
  ColumnSchedule c = scheduleColumnKernel(k, space, graph, config);
  ASSERT_EQ(c.sharedSlots.size(), 1u);
  const auto &[dim, group] = *c.sharedSlots.begin();
  EXPECT_EQ(group.size(), 3u);
  for (unsigned n : group)
    EXPECT_EQ(c.reads[n], ColumnRead::FetchedShared) << n;
  std::string cuda = source("stack_reduce_sum");
  EXPECT_EQ(count(cuda, "> pf"), 1u); // one slot array (pfs_<dim>) for the three
  EXPECT_NE(cuda.find(std::string("*slice_") + dim + " = "), std::string::npos);
  for (unsigned n : group)
    if (n != group.front()) {
      EXPECT_NE(cuda.find("float (&vin" + std::to_string(n) + ")[8] = vins_" + dim),
                std::string::npos)
          << n;
    }
}

TEST_F(KernelSchedule, SweepUnrolledByTheFetchDepthIsALoop) {
  // The same kernel with its sweep unrolled by the 2 rows fetched ahead: the
  // same schedule and fetches, the row loop unrolled by 2 instead of whole
  // (a large body then stays in the instruction cache).
  dmc::dm::KernelOp k = lower("dropout_dgelu_reduce_sum");
  KernelConfig whole = defaultConfig(space), rolled = whole;
  rolled.unroll = kFetchDepth;
  ASSERT_TRUE(whyInfeasible(space, rolled).empty()) << whyInfeasible(space, rolled);
  EXPECT_NE(rolled.describe().find("sweep unrolled by 2"), std::string::npos);
  config = whole;
  std::string wholeCuda = source("dropout_dgelu_reduce_sum");
  config = rolled;
  ColumnSchedule c = scheduleColumnKernel(k, space, graph, config);
  EXPECT_EQ(c.unroll, kFetchDepth);
  EXPECT_EQ(c.reads, (std::vector<ColumnRead>{ColumnRead::Fetched, ColumnRead::Fetched}));
  std::string cuda = source("dropout_dgelu_reduce_sum");
  std::string loop = "  for (int it = 0; it < " + std::to_string(c.iters) + "; ++it) {";
  EXPECT_NE(cuda.find("#pragma unroll 2\n" + loop), std::string::npos);
  EXPECT_NE(wholeCuda.find("#pragma unroll\n" + loop), std::string::npos);
  // Only that line and the configuration's description differ.
  std::string back = cuda;
  for (auto [from, to] : {std::pair<std::string, std::string>{", sweep unrolled by 2", ""},
                          {"#pragma unroll 2\n" + loop, "#pragma unroll\n" + loop}})
    back.replace(back.find(from), from.size(), to);
  EXPECT_EQ(back, wholeCuda);
  // The twin is enumerated after every other configuration; where the sweep
  // does not fetch (128 rows per thread) or the kernel is not a column one,
  // unroll is refused with the reason.
  std::vector<KernelConfig> all = enumerateConfigs(space);
  auto first = std::find_if(all.begin(), all.end(), [](const KernelConfig &k) {
    return k.unroll != 0;
  });
  ASSERT_NE(first, all.end());
  EXPECT_TRUE(std::all_of(first, all.end(), [](const KernelConfig &k) {
    return k.unroll == kFetchDepth;
  }));
  KernelConfig unsplit = rolled;
  unsplit.split = 1;
  EXPECT_NE(whyInfeasible(space, unsplit).find("rows per thread: the sweep fetches ahead"),
            std::string::npos)
      << whyInfeasible(space, unsplit);
  KernelConfig three = rolled;
  three.unroll = 3;
  EXPECT_NE(whyInfeasible(space, three).find("not 3"), std::string::npos);
}

TEST_F(KernelSchedule, ManyRowsPerThreadAreNotFetched) {
  // One block per tile (no split): 128 rows per thread, beyond the unrolled
  // fetch; the inputs are read as one vector access per row.
  dmc::dm::KernelOp k = lower("dropout_dgelu_reduce_sum");
  KernelConfig cfg = defaultConfig(space);
  cfg.split = 1;
  ASSERT_TRUE(whyInfeasible(space, cfg).empty()) << whyInfeasible(space, cfg);
  config = cfg;
  ColumnSchedule c = scheduleColumnKernel(k, space, graph, config);
  EXPECT_GT(c.iters, kMaxFetchIterations);
  EXPECT_TRUE(c.fetched.empty());
  EXPECT_EQ(c.reads, (std::vector<ColumnRead>{ColumnRead::Vector, ColumnRead::Vector}));
  std::string cuda = source("dropout_dgelu_reduce_sum");
  EXPECT_EQ(cuda.find("dmcFetchVec<8>(pf"), std::string::npos);
  EXPECT_EQ(cuda.find("arrived"), std::string::npos); // no partials across blocks
}

/// A fused attention kernel's schedule is data too: the problem read off its
/// region, its kind and tiles, and the launch its CUDA is emitted with.
TEST_F(KernelSchedule, FusedAttentionKernelsHaveTheirSchedule) {
  struct Expected {
    const char *name;
    dmcgen::AttentionKernelKind kind;
    const char *owns, *dropout;
  };
  for (const Expected &e :
       {Expected{"attention", dmcgen::AttentionKernelKind::Forward,
                 "a block owns 64 queries and loops over tiles of 64 keys",
                 "drawn, keep bits written"},
        Expected{"attention_grad_kv", dmcgen::AttentionKernelKind::GradKV,
                 "a block owns 64 keys and loops over tiles of 64 queries", "keep bits read"},
        Expected{"attention_grad_q", dmcgen::AttentionKernelKind::GradQ,
                 "a block owns 64 queries and loops over tiles of 64 keys", "keep bits read"}}) {
    SCOPED_TRACE(e.name);
    dmc::dm::KernelOp k = dmc::test::kernelNamed(*module, e.name);
    ASSERT_TRUE(isFusedKernel(k));
    KernelConfig def = defaultFusedConfig(k);
    auto s = scheduleAttention(k, def);
    ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
    ASSERT_NE(s->attention(), nullptr);
    EXPECT_STREQ(s->shapeName(), "attention");
    const AttentionSchedule &a = *s->attention();
    EXPECT_EQ(a.kind, e.kind);
    EXPECT_EQ(a.problem.B, 8);
    EXPECT_EQ(a.problem.H, 16);
    EXPECT_EQ(a.problem.Lq, 512);
    EXPECT_EQ(a.problem.D, 64);
    EXPECT_TRUE(a.problem.keepBits);
    EXPECT_EQ(a.tiles.blockM, def.blockM);
    EXPECT_EQ(a.tiles.warps, def.warps);
    // The CUDA is emitted with the schedule's launch; no config means the default tiles.
    auto emitted = emitKernel(k, KernelConfig(), "k");
    ASSERT_TRUE(static_cast<bool>(emitted)) << llvm::toString(emitted.takeError());
    KernelLaunch l = launchOf(*emitted);
    EXPECT_EQ(l.grid, s->launch.grid);
    EXPECT_EQ(l.gridY, s->launch.gridY);
    EXPECT_EQ(l.gridZ, s->launch.gridZ);
    EXPECT_EQ(l.blockX * l.blockY, s->launch.blockX * s->launch.blockY);
    EXPECT_EQ(l.sharedBytes, s->launch.sharedBytes);
    EXPECT_GT(l.sharedBytes, 0);
    EXPECT_EQ(l.grid * l.gridY * l.gridZ, 8 * 16 * 8);
    auto text = describeKernel(k, def);
    ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
    EXPECT_NE(text->find("attention, " + def.describe()), std::string::npos) << *text;
    EXPECT_NE(text->find(std::string("attention: ") + dmcgen::kernelKindName(e.kind) +
                         " of B8 H16 Lq512 Lk512 D64 bf16, scale 0.125; masks none"),
              std::string::npos)
        << *text;
    EXPECT_NE(text->find(e.owns), std::string::npos) << *text;
    EXPECT_NE(text->find(std::string("dropout: p 0.1 (Philox id ")), std::string::npos) << *text;
    EXPECT_NE(text->find(e.dropout), std::string::npos) << *text;
    EXPECT_NE(text->find("launch: 8 x 16 x 8 blocks of 128 threads, " +
                         std::to_string(l.sharedBytes) + " bytes of shared memory"),
              std::string::npos)
        << *text;
  }
}

TEST_F(KernelSchedule, AttentionBlocksAnSmAreAKnob) {
  // min_blocks reaches the launch bounds, the description and the
  // enumeration; the cost model prices the fuller waves it allows.
  dmc::dm::KernelOp k = dmc::test::kernelNamed(*module, "attention");
  KernelConfig def = defaultFusedConfig(k), four = def;
  four.minBlocks = 4;
  EXPECT_EQ(four.describe(), "attention tiles 64x64, 4 warps, wgmma, 4 blocks an SM");
  bool listed = false;
  for (const KernelConfig &c : enumerateFusedConfigs(k))
    listed |= c.describe() == four.describe();
  EXPECT_TRUE(listed);
  auto e = emitKernel(k, four, "k");
  ASSERT_TRUE(static_cast<bool>(e)) << llvm::toString(e.takeError());
  EXPECT_NE(e->source.find("__launch_bounds__(128, 4)"), std::string::npos);
  auto text = describeKernel(k, four);
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_NE(text->find("attention, attention tiles 64x64, 4 warps, wgmma, 4 blocks an SM"),
            std::string::npos)
      << *text;
  KernelSpace none;
  std::optional<double> atDefault = priceConfiguration(k, none, def),
                        atFour = priceConfiguration(k, none, four);
  ASSERT_TRUE(atDefault && atFour);
  EXPECT_LT(*atFour, *atDefault); // 1024 blocks on 4 x 132 slots, not 3 x 132
}

TEST_F(KernelSchedule, InfeasibleAttentionTilesSayWhy) {
  dmc::dm::KernelOp k = dmc::test::kernelNamed(*module, "attention");
  KernelConfig c;
  c.blockM = 48;
  c.blockN = 64;
  c.warps = 4;
  auto s = scheduleAttention(k, c);
  ASSERT_FALSE(static_cast<bool>(s));
  std::string why = llvm::toString(s.takeError());
  EXPECT_NE(why.find("fused kernel 'attention': tiles attention tiles 48x64, 4 warps are "
                     "infeasible: "),
            std::string::npos)
      << why;
}

} // namespace
