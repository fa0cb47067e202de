//===- SampledContraction.h - a contraction's reference, sampled ----------===//
//
// The reference of a cuBLASLt contraction too large for the interpreter
// (above ReferenceOptions::flopLimit): only the output elements the
// reference file stores (every stride-th, flat in the output's stored
// layout), each a dot product over the reduced dims accumulated in double,
// times the scale, plus the bias epilogue's bias; a bias gradient output
// (BGradA/B: a sum over one operand, cheap) in full. Written without the
// interpreter's loops, so it is an independent check of every layout the
// tuner measures a contraction in.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_BUNDLE_SAMPLEDCONTRACTION_H
#define DMC_COMPILER_BUNDLE_SAMPLEDCONTRACTION_H

#include "compiler/HostTensor.h"
#include "runtime/format/GemmDescriptor.h"

#include <cstdint>
#include <vector>

namespace dmc::bundle {

/// Elements 0, stride, 2 stride, ... (row-major in `out.dims`) of
/// epilogue(scale * sum a*b); `out` gives dims and shape (its data unused).
/// `bias`: the bias for Epilogue::Bias or the addend for Epilogue::Accumulate,
/// else unused.
std::vector<double> sampledContract(const HostTensor &a, const HostTensor &b, double scale,
                                    dmrt::Epilogue epilogue, const HostTensor *bias,
                                    const HostTensor &out, int64_t stride);

} // namespace dmc::bundle

#endif // DMC_COMPILER_BUNDLE_SAMPLEDCONTRACTION_H
