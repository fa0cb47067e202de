//===- Safetensors.h - Read and write .safetensors files ----------*- C++ -*-===//
//
// The safetensors container (https://github.com/huggingface/safetensors):
//
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  JSON object: {"<name>": {"dtype": "F32", "shape": [..],
//                                        "data_offsets": [begin, end]}, ...,
//                            "__metadata__": {"key": "value", ...}}
//   [rest]     the data buffer; offsets are relative to its first byte
//
// Used for weights, gradients and reference-oracle tensors. No exceptions
// leave this API: every function that can fail returns false and an error
// message that starts with the file path.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_SAFETENSORS_H
#define DMRT_SAFETENSORS_H

#include "runtime/format/DType.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dmrt {

/// The safetensors file format's own dtype codes: "F64", "F32", "F16",
/// "BF16", "I64", "I32", "U8", "BOOL" (dmc's spelling is dtypeName()).
const char *safetensorsDTypeName(DType);
/// Inverse of safetensorsDTypeName; false (and `out` untouched) otherwise.
bool parseSafetensorsDType(const std::string &, DType &);

/// One named tensor; `bytes` holds the elements row-major, little-endian.
struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  /// Product of the dimensions (1 for a scalar, shape == {}).
  int64_t numElements() const;
};

/// The contents of one file: tensors in file order plus the string metadata.
struct TensorFile {
  std::vector<Tensor> tensors;
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or nullptr.
  const Tensor *find(const std::string &name) const;
};

/// On failure returns false and sets `error` to a message naming the file and
/// the problem (missing file, truncated header, header not JSON, bad dtype for
/// tensor X, offsets out of range / overlapping / not matching shape*dtype for
/// tensor X, ...). Tensors are returned in the order of their data offsets.
bool readSafetensors(const std::string &path, TensorFile &out,
                     std::string &error);
/// The same checks on a file already in memory (`name` starts the messages).
bool parseSafetensors(const uint8_t *data, size_t size, const std::string &name,
                      TensorFile &out, std::string &error);

/// Writes `in` keeping the tensor order (data laid out back to back in that
/// order) and "__metadata__" first when non-empty. The header is padded with
/// spaces so the data buffer starts 8-byte aligned. Fails on duplicate or
/// reserved names, negative dimensions, a byte count that does not match
/// shape * dtype, or an I/O error.
bool writeSafetensors(const std::string &path, const TensorFile &in,
                      std::string &error);

/// Element conversions for any float/int dtype. BOOL reads as 0/1.
std::vector<double> toDoubles(const Tensor &);

/// Builds a tensor from doubles: F16/BF16/F32 round to nearest even (without
/// double rounding), integer types round to nearest and saturate (NaN -> 0),
/// BOOL stores v != 0. `values.size()` must equal the shape's product; extra
/// values are ignored and missing ones read as 0.
Tensor fromDoubles(const std::string &name, DType, std::vector<int64_t> shape,
                   const std::vector<double> &values);

} // namespace dmrt

#endif // DMRT_SAFETENSORS_H
