//===- StorageType.cpp - The bundle dtype of a dm tensor ------------------===//
#include "ir/StorageType.h"

#include "ir/DmDialect.h"

namespace dmc::dm {

std::optional<dmrt::DType> storageDType(mlir::Type type) {
  if (auto tensor = mlir::dyn_cast<TensorType>(type))
    type = tensor.getElementType();
  if (type.isBF16())
    return dmrt::DType::BF16;
  if (type.isF16())
    return dmrt::DType::F16;
  if (type.isF32())
    return dmrt::DType::F32;
  if (type.isF64())
    return dmrt::DType::F64;
  if (type.isInteger(32))
    return dmrt::DType::I32;
  return std::nullopt;
}

} // namespace dmc::dm
