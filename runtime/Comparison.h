//===- Comparison.h - An output against its reference, to its own scale -*- C++ -*-===//
//
// The one elementwise check of GPU results against CPU references, used per
// step by the harness (runtime/Harness.h) and per tensor of a whole step
// (runtime/StepCheck.h). CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_COMPARISON_H
#define DMRT_COMPARISON_H

#include <cstdint>
#include <string>
#include <vector>

namespace dmrt {

/// The check of one output against its (possibly sampled) reference:
///   element i passes iff |got_i - ref_i| <= atol + rtol |ref_i|,
///   atol = rtol x RMS(ref), the RMS over the tensor's finite reference values.
/// Every bound follows the tensor's own scale (no fixed 1): an all-zero
/// output fails for a softmax whose values are ~0.005 as for a layernorm
/// output of RMS 1, and so do a 5% scaling, a shift by a few % of the RMS,
/// and swapped elements. A reference that is all zeros cannot tell a right
/// output from a zeroed one: the comparison fails (zeroReference) instead of
/// comparing zero with zero. Non-finite reference values must be matched
/// exactly (same NaN-ness, same infinity); a non-finite output where the
/// reference is finite fails.
struct Comparison {
  double rtol = 0;
  double scale = 0; // RMS of the finite reference values
  double atol = 0;  // rtol * scale
  double maxAbsErr = 0; // +inf when a value is NaN/inf where ref is finite
  double maxAbsRef = 0;
  int64_t compared = 0; // elements compared
  int64_t failing = 0;  // elements over their bound
  /// The element with the largest |err| / bound (maxRatio; 1 is the limit).
  int64_t worstIndex = -1;
  double worstRef = 0, worstGot = 0, worstErr = 0, worstBound = 0;
  double maxRatio = 0;
  int64_t nonFinite = 0; // outputs NaN/inf where the reference is finite
  bool zeroReference = false; // finite reference values, all of them 0
  bool sizeMismatch = false;
  /// Element i's bound also had spread_i added (a rounding the reference
  /// cannot reproduce; docs/bundle-format.md, `spread.out<k>`).
  bool spread = false;
  bool pass = false; // failing == 0 && !zeroReference && !sizeMismatch
};
/// Compares `got` with `ref` elementwise as Comparison says, with `rtol`;
/// with `spread` (one value per element of `ref`), element i's bound is
/// larger by spread_i.
Comparison compareOutput(const std::vector<double> &ref,
                         const std::vector<double> &got, double rtol,
                         const std::vector<double> *spread = nullptr);
/// The same check with the caller's atol (and `scale` reported as the RMS):
/// element i passes iff |got_i - ref_i| <= atol + rtol |ref_i| (+ spread_i).
Comparison compareWithBound(const std::vector<double> &ref,
                            const std::vector<double> &got, double rtol, double atol,
                            const std::vector<double> *spread = nullptr);
/// One line on why a comparison failed (or how close it came): the counts,
/// the bound and the worst element.
std::string describeComparison(const Comparison &c);

/// Faults planted into a GPU output before its comparison, to show on real
/// outputs that the check catches them (dmrt-bench --plant-fault):
///   zero:    every element 0
///   scale:   every element x 1.05
///   shift:   every element + 3% of the output's RMS
///   permute: the elements of each aligned group of 8 (a 16-byte vector of
///            bf16, two of fp32) in reverse order
enum class PlantedFault { None, Zero, Scale, Shift, Permute };
const char *plantedFaultName(PlantedFault f);
/// "zero", "scale", "shift", "permute" -> the fault; false otherwise.
bool parsePlantedFault(const std::string &s, PlantedFault &out);
/// Applies `f` to `values` (the whole output, before any sampling).
void plantFault(std::vector<double> &values, PlantedFault f);

} // namespace dmrt

#endif // DMRT_COMPARISON_H
