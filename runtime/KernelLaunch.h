//===- KernelLaunch.h - A kernel's launch parameters, built once --*- C++ -*-===//
//
// cuLaunchKernel takes an array of pointers to the parameter values. A
// KernelLaunch holds one kernel's values in the format's order
// (runtime/format/KernelAbi.h: inputs, outputs, [workspace,] seed) and that
// array. It is built once per set of addresses and then launched any number
// of times: a launch only writes the dropout key into the seed slot
// (`params`), which allocates nothing. The executor keeps one per kernel and
// rebuilds them only when a bind moved a pointer or the arena changed; its
// plain launches, graph captures and graph seed updates all read them. The
// benchmark harness builds one per kernel and buffer set.
//
// CPU only (no CUDA call): tests check the order and that launching
// allocates nothing.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_KERNELLAUNCH_H
#define DMRT_KERNELLAUNCH_H

#include "runtime/format/KernelAbi.h"
#include "runtime/format/Manifest.h"

#include <vector>

namespace dmrt {

struct KernelLaunch {
  std::vector<void *> values; ///< pointer parameters, in the format's order
  unsigned long long seed = 0;
  std::vector<void *> params; ///< cuLaunchKernel's array: into values, then &seed

  /// (Re)fills values from `tensorPtr(id)` (kernel k's inputs and outputs)
  /// and `workspace` (used when k has one), and params. Allocates (once per
  /// set of addresses, not per launch); params stay valid until the next
  /// build or until this object moves.
  template <class TensorPtr>
  void build(const BundleKernel &k, void *workspace, TensorPtr tensorPtr) {
    size_t n = k.inputs.size() + k.outputs.size() + (k.workspaceBytes > 0 ? 1 : 0);
    values.resize(n);
    params.resize(n + 1);
    size_t v = 0;
    for (KernelParam p :
         kernelParameters(k.inputs.size(), k.outputs.size(), k.workspaceBytes > 0)) {
      switch (p.kind) {
      case KernelParamKind::Input: values[v] = tensorPtr(k.inputs[p.index]); break;
      case KernelParamKind::Output: values[v] = tensorPtr(k.outputs[p.index]); break;
      case KernelParamKind::Workspace: values[v] = workspace; break;
      case KernelParamKind::Seed: params[v] = &seed; continue;
      }
      params[v] = &values[v];
      ++v;
    }
  }

  /// The parameter array with `key` as the seed.
  void **withSeed(unsigned long long key) {
    seed = key;
    return params.data();
  }
};

} // namespace dmrt

#endif // DMRT_KERNELLAUNCH_H
