//===- Types.h - Fixed-width integers and DMRT_HD for host and device -*- C++ -*-===//
//
// The one place the device headers (Philox.h, Float16.h) and every generated
// kernel get uint16_t, uint32_t, uint64_t, int32_t and the DMRT_HD qualifier.
// NVRTC has no <stdint.h>: under NVRTC this file typedefs them itself. The
// NVRTC driver embeds the three device headers under these same paths
// (runtime/format/device/*.h), so host and device include the same names.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_DEVICE_TYPES_H
#define DMRT_DEVICE_TYPES_H

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
              "runtime/format/device/Types.h: unexpected integer widths");
#else
#include <stdint.h>
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define DMRT_HD __host__ __device__
#else
#define DMRT_HD
#endif

#endif // DMRT_DEVICE_TYPES_H
