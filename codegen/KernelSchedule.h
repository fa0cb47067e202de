//===- KernelSchedule.h - a loop kernel's schedule, whatever its shape ----===//
//
// The one structured form between a lowered loop kernel (its NodeGraph) and
// its CUDA: scheduleKernel decides, from the kernel's space and its
// configuration, which of the three loop nests it runs and everything about
// it (RowSchedule: passes over each row; ColumnSchedule: a sweep down the
// rows with lanes along a column; TileSchedule: a tile staged through shared
// memory), and emitSchedule prints exactly that. Nothing is decided while
// printing, so tests, the cost model and `dmc graph --emit=schedule`
// (describeSchedule) read a kernel's loops, passes, reads, reductions and
// stores as data, without parsing CUDA. A fused attention kernel's schedule
// is its AttentionSchedule: the problem read off its region and types, which
// of its three kernels it is and its tiles, from which codegen/attention's
// device templates are instantiated.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_CODEGEN_KERNELSCHEDULE_H
#define DMC_CODEGEN_KERNELSCHEDULE_H

#include "codegen/ColumnSchedule.h"
#include "codegen/KernelEmitter.h"
#include "codegen/RowSchedule.h"
#include "codegen/TileSchedule.h"
#include "codegen/attention/AttentionProblem.h"

#include <variant>

namespace dmc::codegen {

/// How a kernel is launched: decided with its schedule, before its CUDA is
/// printed (emitSchedule copies it into the EmittedKernel), so the cost model
/// prices a configuration without printing it.
struct KernelLaunch {
  int64_t grid = 0, gridY = 1, gridZ = 1;
  int blockX = 1, blockY = 1;
  int sharedBytes = 0; ///< dynamic shared memory (loop kernels: none)
  int passes = 1;      ///< sweeps over each row
  int64_t workspaceBytes = 0;
  /// A second launch, "<entry>_finish", adds the column sums' partials.
  bool finishes = false;
  int64_t finishGrid = 0;
  int finishBlockX = 0, finishBlockY = 0;
  std::vector<int64_t> finishOutputs; ///< the outputs only that launch writes
};

/// The launch of an emitted kernel.
KernelLaunch launchOf(const EmittedKernel &k);
/// Its inverse: `k`'s launch fields from `launch`, the finishing launch's
/// entry "<entry>_finish".
void applyLaunch(const KernelLaunch &launch, llvm::StringRef entry, EmittedKernel &k);

/// A fused attention kernel (`dm.fused`): what it computes, read off its
/// region and operand types (AttentionLowering.cpp), which of the three
/// kernels it is and the tiles it runs; codegen/attention's device
/// templates are instantiated on exactly these.
struct AttentionSchedule {
  dmcgen::AttentionProblem problem;
  dmcgen::AttentionKernelKind kind = dmcgen::AttentionKernelKind::Forward;
  dmcgen::AttentionTiles tiles;
};

struct KernelSchedule {
  /// Rows: isTiledConfig and isColumnConfig false; Columns: isColumnConfig;
  /// Tiles: isTiledConfig; Attention: isFusedKernel.
  std::variant<RowSchedule, ColumnSchedule, TileSchedule, AttentionSchedule> plan;
  KernelLaunch launch;
  const RowSchedule *rows() const { return std::get_if<RowSchedule>(&plan); }
  const ColumnSchedule *columns() const { return std::get_if<ColumnSchedule>(&plan); }
  const TileSchedule *tiles() const { return std::get_if<TileSchedule>(&plan); }
  const AttentionSchedule *attention() const { return std::get_if<AttentionSchedule>(&plan); }
  /// "rows", "columns", "tiles" or "attention".
  const char *shapeName() const;
};

/// The space of loop kernel `kernel` and its lowering into `g`, once `config`
/// is known to be feasible for it (an error naming the kernel, the
/// configuration and why otherwise).
llvm::Error lowerForConfig(dm::KernelOp kernel, const KernelConfig &config, KernelSpace &space,
                           NodeGraph &g);

/// The schedule of `kernel`, lowered into `g` for `space`, under `config`
/// (which must be feasible: whyInfeasible empty).
KernelSchedule scheduleKernel(dm::KernelOp kernel, const KernelSpace &space, const NodeGraph &g,
                              const KernelConfig &config);

/// A fused attention kernel's configuration: its tiles as knobs.
KernelConfig withTiles(const dmcgen::AttentionTiles &tiles);

/// The schedule of fused attention kernel `kernel` (isFusedKernel) with the
/// tiles of `config`, its default tiles when config.warps is 0; an error
/// naming the kernel when its region is not one codegen/attention runs or
/// the tiles do not fit (the target's shared memory, wgmma on sm_90a only).
llvm::Expected<KernelSchedule> scheduleAttention(dm::KernelOp kernel, const KernelConfig &config);

/// The CUDA of fused attention kernel `kernel` under `schedule`
/// (scheduleAttention), entry point `entry`.
EmittedKernel emitAttentionSchedule(dm::KernelOp kernel, const KernelSchedule &schedule,
                                    llvm::StringRef entry);

/// The CUDA of `kernel` under `schedule` (scheduleKernel of the same space,
/// graph and config), entry point `entry`.
llvm::Expected<EmittedKernel> emitSchedule(dm::KernelOp kernel, const KernelSpace &space,
                                           const NodeGraph &g, const KernelConfig &config,
                                           const KernelSchedule &schedule, llvm::StringRef entry);

/// The schedule as text, one fact per line, each starting with `indent`:
/// the shape and its loops, then per pass (rows) or for the sweep (columns,
/// tiles) what is read and how, computed, reduced, summed and stored; nodes
/// as n<id>, inputs as in<n>, outputs as out<n>, dropout draws as d<k> with
/// the saved keep bits they read or write (`g`: the graph scheduled).
std::string describeSchedule(const KernelSchedule &schedule, const NodeGraph &g,
                             const std::string &indent = "  ");

/// describeSchedule of `kernel` under `config`, after a first line
/// "<shape>, <config.describe()>"; for a fused attention kernel, its
/// problem (sizes, masks, dropout and keep bits), tiles and launch. An
/// infeasible config or a kernel that does not lower is an error naming it.
llvm::Expected<std::string> describeKernel(dm::KernelOp kernel, const KernelConfig &config);

/// The three emitters emitSchedule chooses from (KernelEmitter.cpp,
/// ColumnEmitter.cpp, TileEmitter.cpp); `g` is the kernel lowered for `s`.
/// They return the entry and source; emitSchedule adds the launch.
llvm::Expected<EmittedKernel> emitRowKernel(dm::KernelOp kernel, const KernelSpace &s,
                                            const NodeGraph &g, const KernelConfig &config,
                                            const RowSchedule &r, llvm::StringRef entry);
llvm::Expected<EmittedKernel> emitColumnKernel(dm::KernelOp kernel, const KernelSpace &s,
                                               const NodeGraph &g, const KernelConfig &config,
                                               const ColumnSchedule &c, llvm::StringRef entry);
llvm::Expected<EmittedKernel> emitTiledKernel(dm::KernelOp kernel, const KernelSpace &s,
                                              const NodeGraph &g, const KernelConfig &config,
                                              const TileSchedule &ts, llvm::StringRef entry);

} // namespace dmc::codegen

#endif // DMC_CODEGEN_KERNELSCHEDULE_H
