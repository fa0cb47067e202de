//===- DType.h - Element types, one spelling each ------------------*- C++ -*-===//
//
// The element types of every tensor dmc writes or reads, and their one dmc
// spelling: "f64", "f32", "f16", "bf16", "i64", "i32", "u8", "bool". The same
// names appear in model.json (`dtype`), bundle manifests and reports. Only the
// safetensors container has its own codes ("F32", "BF16", ...), which
// runtime/Safetensors.h translates at its boundary.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_DTYPE_H
#define DMRT_FORMAT_DTYPE_H

#include <cstddef>
#include <string>

namespace dmrt {

enum class DType { F64, F32, F16, BF16, I64, I32, U8, BOOL };

/// Every DType, in enum order.
inline constexpr DType kAllDTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16,
                                       DType::I64, DType::I32, DType::U8,  DType::BOOL};

/// The dmc spelling ("bf16", "f32", ...).
const char *dtypeName(DType);
/// Inverse of dtypeName; false (and `out` untouched) for any other string.
bool parseDType(const std::string &, DType &out);
/// Bytes per element (BOOL is one byte).
size_t dtypeSize(DType);
/// F64, F32, F16 and BF16.
bool isFloatDType(DType);
/// "one of bf16, f16, f32" for error messages listing `allowed`.
std::string dtypeList(std::initializer_list<DType> allowed);

} // namespace dmrt

#endif // DMRT_FORMAT_DTYPE_H
