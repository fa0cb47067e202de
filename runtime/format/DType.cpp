//===- DType.cpp - Element type names and sizes ----------------------------===//
#include "runtime/format/DType.h"

namespace dmrt {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F64: return "f64";
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::U8: return "u8";
  case DType::BOOL: return "bool";
  }
  return "?";
}

bool parseDType(const std::string &s, DType &out) {
  for (DType t : kAllDTypes)
    if (s == dtypeName(t)) {
      out = t;
      return true;
    }
  return false;
}

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64: return 8;
  case DType::F32:
  case DType::I32: return 4;
  case DType::F16:
  case DType::BF16: return 2;
  case DType::U8:
  case DType::BOOL: return 1;
  }
  return 0;
}

bool isFloatDType(DType t) {
  return t == DType::F64 || t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

std::string dtypeList(std::initializer_list<DType> allowed) {
  std::string s;
  for (DType t : allowed)
    s += (s.empty() ? "" : ", ") + std::string(dtypeName(t));
  return "one of " + s;
}

} // namespace dmrt
