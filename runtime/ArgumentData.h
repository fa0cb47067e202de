//===- ArgumentData.h - layer arguments drawn as `dmc eval` draws them ----===//
//
// A layer argument (input, param, grad_output) missing from an inputs file
// is drawn from the run's seed exactly as `dmc eval --precision storage`
// draws it (compiler/TensorIO.cpp generateArgument), from the manifest's
// `init` (version 4): element e = mean + range * v_e for floats, rounded to
// fp32 and then to the tensor's dtype; v_e in [1, max] for integers; v from
// runtime/ReferenceData.h on stream fnv1a32(name). So dmc-run and dmc eval
// see the same arguments, and their outputs compare tensor by tensor.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_ARGUMENTDATA_H
#define DMRT_ARGUMENTDATA_H

#include "runtime/ReferenceData.h"
#include "runtime/Safetensors.h"
#include "runtime/format/Manifest.h"

#include <string>
#include <vector>

namespace dmrt {

/// Tensor `t` (an argument with `init`) drawn from `seed`, in its dtype.
inline Tensor drawArgument(const BundleTensor &t, uint64_t seed) {
  bool integer = t.dtype == DType::I32;
  std::vector<double> values(static_cast<size_t>(t.numElements()));
  uint32_t stream = argumentStream(t.name);
  for (size_t e = 0; e < values.size(); ++e) {
    double v = referenceValue(int64_t(e), seed, stream, integer, t.initMax);
    // As the interpreter: to fp32 first, then to the storage type.
    values[e] = integer ? v : double(float(t.initMean + t.initRange * v));
  }
  return fromDoubles(t.name, t.dtype, t.shape, values);
}

} // namespace dmrt

#endif // DMRT_ARGUMENTDATA_H
