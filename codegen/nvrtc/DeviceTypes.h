//===- DeviceTypes.h - Fixed-width integers for NVRTC kernels -----*- C++ -*-===//
//
// Embedded for NVRTC as "dmrt/Types.h" and pre-included in every compile
// (--pre-include), so runtime/Philox.h and runtime/Float16.h find uint16_t,
// uint32_t, uint64_t and int32_t: NVRTC has no <stdint.h>. Generated code may
// include it again (guarded) but must not typedef these names differently.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_TYPES_H
#define DMRT_TYPES_H

#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
static_assert(sizeof(uint16_t) == 2 && sizeof(uint32_t) == 4 &&
                  sizeof(uint64_t) == 8,
              "dmrt/Types.h: unexpected integer widths");
#else
#include <stdint.h>
#endif

#endif // DMRT_TYPES_H
