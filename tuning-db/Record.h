//===- Record.h - One measurement of the tuning database ---------*- C++ -*-===//
//
// A record is one candidate measured on one device with one software stack:
// a fused kernel with its layouts and knobs, a contraction with its cuBLASLt
// algorithm and epilogue, or a transpose. Records are independent: adding
// candidates never invalidates old ones. docs/tuning-db-format.md describes
// every field; tuning-db/Codec.h reads and writes them, one JSON line each.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_TUNINGDB_RECORD_H
#define DMC_TUNINGDB_RECORD_H

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace dmc::tuningdb {

/// What a record times: one kernel, one contraction, an inserted transpose, or
/// a whole training step of a bundle (its default configuration, steps run
/// back to back with CUDA graphs: what `dmc compile --db` calibrates its
/// prediction with).
enum class Kind { Kernel, Contraction, Transpose, Step };

/// The families of code dmc generates or configures, each with its own codegen
/// version: a change to one family's code invalidates that family's records
/// only, so a retune measures only what changed.
enum class CodegenFamily {
  Kernels,         ///< fused loop kernels (maps, row and column reductions), transposes
  Attention,       ///< the fused attention forward ("attention")
  AttentionGradKV, ///< "attention_grad_kv"
  AttentionGradQ,  ///< "attention_grad_q"
  Contractions,    ///< the cuBLASLt mapping of contractions (descriptors, epilogues)
};
/// Each family's name and version. Bump a family's version whenever its
/// generated code changes (templates, NVRTC options, launch geometry):
/// records of that family measured at another version are then never
/// matched; the other families' records stay valid. Before per-family
/// versions every family was at 8.
struct CodegenVersion {
  CodegenFamily family;
  const char *name;
  int64_t version;
};
inline constexpr CodegenVersion kCodegenVersions[] = {
    {CodegenFamily::Kernels, "kernels", 8},
    /// 12, 11, 11: grad-kv's keep bits exchanged by butterfly transposes, no
    /// mask code where no key can be masked (keysMayBeMasked).
    {CodegenFamily::Attention, "attention", 12},
    /// 12, 12: grad-q writes Drow (dO . o), grad-kv reads it instead of an
    /// o tile and a dot product per query tile (and runs after grad-q).
    {CodegenFamily::AttentionGradKV, "attention_grad_kv", 12},
    {CodegenFamily::AttentionGradQ, "attention_grad_q", 12},
    /// 9: timed as their step runs, a CUDA graph (cuBLASLt's memset nodes priced).
    {CodegenFamily::Contractions, "contractions", 9},
};
/// The family of a measurement: contractions by kind, a fused attention
/// kernel by its kernel name (the signature "kernel NAME(...)" names the
/// `dm.fused` kind), every other kernel and transpose is Kernels.
CodegenFamily codegenFamily(Kind kind, const std::string &signature);
/// This build's version of that family (kCodegenVersions); of a whole step,
/// the sum of every family's version (a step runs code of every family, and
/// versions only grow, so any bump makes its records stale).
int64_t codegenVersion(Kind kind, const std::string &signature);
/// "kernels 8, attention 9, ...": every family's version, for logs.
std::string describeCodegenVersions();

struct Device {
  std::string name; ///< as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  std::string cc;   ///< compute capability "MAJOR.MINOR", e.g. "9.0"
  int64_t sms = 0, memClockKhz = 0, l2Bytes = 0;
};

struct Software {
  int64_t cuda = 0;     ///< CUDA runtime version, e.g. 13000
  int64_t cublaslt = 0; ///< cublasLtGetVersion(), e.g. 130000
  std::string nvrtc;    ///< "MAJOR.MINOR", e.g. "13.0"
  /// The codegen version of the record's family when it was measured
  /// (codegenVersion(kind, signature) for a new record; 0: not set).
  int64_t codegen = 0;
};

const char *kindName(Kind);
bool parseKind(const std::string &, Kind &out);

/// A kernel knob: an integer (tile width, vector width) or a string (lane_dim).
using Knob = std::variant<int64_t, std::string>;

struct Record {
  Device device;
  Software software;
  Kind kind = Kind::Kernel;
  std::string signature;              ///< structural key, opaque here
  std::map<std::string, int64_t> sizes; ///< dimension letter -> extent
  std::string dtype;                  ///< a runtime/format/DType.h spelling
  std::vector<std::string> layouts;   ///< inputs then outputs, dimension letters
  std::map<std::string, Knob> knobs;
  std::string algorithm; ///< contractions: serialized cuBLASLt algorithm or "heuristic"
  std::string epilogue;  ///< contractions only
  double medianUs = 0, minUs = 0;
  int64_t samples = 0;
  std::string date; ///< "YYYY-MM-DDTHH:MM:SSZ"
  /// A candidate whose output was wrong or that failed to run: kept so that a
  /// resumed tuner skips it, never selected.
  bool rejected = false;
  std::string reason; ///< why it was rejected; empty otherwise
};

/// The candidate's identity (device name and cc, software, kind, signature,
/// sizes, dtype, layouts, knobs, algorithm, epilogue): equal keys measure the
/// same thing, so merge keeps one and a resumed tuner skips it.
std::string key(const Record &);
/// The problem a record solves (key() without layouts, knobs, algorithm and
/// epilogue): records with one problem key are alternatives to each other.
std::string problemKey(const Record &);
/// Of two records with one key, whether `a` is the one to keep: an ok record
/// before a rejected one, then more samples, then the lower median.
bool better(const Record &a, const Record &b);

/// "layouts [bjk, kn] knobs {tx=32, lane_dim=j}" or "algorithm ..." (a step
/// record: "the whole step, CUDA graphs"): for tables.
std::string describeCandidate(const Record &);
/// The current time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utcNow();
/// Whether `s` is "YYYY-MM-DDTHH:MM:SSZ" with fields in range.
bool validDate(const std::string &s);

} // namespace dmc::tuningdb

#endif // DMC_TUNINGDB_RECORD_H
