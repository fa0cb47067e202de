//===- StorageType.h - The bundle dtype of a dm tensor -------------*- C++ -*-===//
//
// The one translation from MLIR element types to the bundle format's DType
// (runtime/format/DType.h), for the bundle writer, reference data and codegen.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_IR_STORAGETYPE_H
#define DMC_IR_STORAGETYPE_H

#include "runtime/format/DType.h"

#include "mlir/IR/Types.h"

#include <optional>

namespace dmc::dm {

/// How the elements of `type` (a dm tensor type or an element type) are
/// stored: bf16, f16, f32, f64 or i32; std::nullopt for any other type.
std::optional<dmrt::DType> storageDType(mlir::Type type);

} // namespace dmc::dm

#endif // DMC_IR_STORAGETYPE_H
