//===- ConfigProblem.h - the abstract global configuration problem -------===//
//
// The input of the global configuration selection (DESIGN.md, "Configuration
// selection"; issue 11, section 4), free of MLIR: tensors with candidate
// layouts, operators in one topological order (forward and backward
// together), each with candidate configurations that fix the layout of every
// tensor the operator touches and carry a measured cost.
//
// Cost model, shared by every solver in this directory:
//  * a run costs the sum of its chosen configurations' costs plus transposes;
//  * a written tensor is stored in the layout its producer's configuration
//    writes; an argument (caller-owned input) in its fixed layout, or, when it
//    has none, in whichever candidate the solver picks at no cost (e.g. a
//    weight the bundle lays out at load time);
//  * every read in a layout other than the stored one pays
//    transposeCost(tensor, stored, read) itself: two readers that both need
//    the same other layout pay twice (the code generator inserts one transpose
//    per consumer, it does not share transposed copies);
//  * a written tensor with a fixed layout is a result: the caller reads it at
//    the end in that layout, and the transpose to it (if any) is charged to
//    the producing operator.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_PASSES_SELECT_CONFIGPROBLEM_H
#define DMC_PASSES_SELECT_CONFIGPROBLEM_H

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dmc::select {

/// A value or an error message (no exceptions in compiler code).
template <class T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  static Result failure(std::string message) {
    Result r;
    r.error_ = std::move(message);
    return r;
  }
  bool ok() const { return value_.has_value(); }
  const std::string &error() const { return error_; }
  const T &operator*() const { return *value_; }
  const T *operator->() const { return &*value_; }

private:
  Result() = default;
  std::optional<T> value_;
  std::string error_;
};

inline constexpr double kForbidden = std::numeric_limits<double>::infinity();

struct Tensor {
  std::string name;
  /// The layouts readers and writers may use (e.g. dimension orders "bjk").
  std::vector<std::string> layouts;
  /// Caller-owned input: never written by an operator, live from the start.
  bool isArgument = false;
  /// For an argument: the layout the caller passes. For a written tensor:
  /// the layout the caller reads at the end (a result). Empty: free.
  std::string fixedLayout;
};

/// The layout a configuration uses for one tensor its operator touches.
struct TensorLayout {
  int tensor = -1;
  std::string layout;
};

struct Config {
  std::string label; ///< knobs, for reports
  /// One entry per tensor the operator reads or writes, nothing else.
  std::vector<TensorLayout> layouts;
  double cost = 0;        ///< measured microseconds
  bool available = true;  ///< false: no measurement, never chosen
};

struct Op {
  std::string name;
  std::vector<int> reads;  ///< tensor ids, each at most once
  std::vector<int> writes; ///< tensor ids, each written by one op only
  std::vector<Config> configs;
  /// Per read: whether it may go through a transpose (a layout other than
  /// the stored one, at transposeCost). Empty: every read may. A read that
  /// may not is free in the stored layout and forbidden in any other, e.g.
  /// where the configuration can express a transpose only before some
  /// operators' operands.
  std::vector<bool> transposable;
};

/// Cost of transposing `tensor` from layout `from` to `to` (never called with
/// from == to, which is free); kForbidden where no transpose is allowed.
using TransposeCost =
    std::function<double(int tensor, const std::string &from, const std::string &to)>;

struct ConfigProblem {
  std::vector<Tensor> tensors; ///< a tensor's id is its index
  std::vector<Op> ops;         ///< in topological order
  /// Empty: every transpose is forbidden.
  TransposeCost transposeCost;
};

/// A full assignment: a configuration per op and, optionally, the stored
/// layout of each argument without a fixed layout.
struct Assignment {
  std::vector<int> configs; ///< index into ops[i].configs
  /// Per tensor id, an index into its layouts for free arguments (-1
  /// elsewhere). Empty: evaluate() picks each free argument's cheapest layout
  /// for the given configurations (each argument independently, lowest index
  /// on ties), which is what the optimum over layouts does.
  std::vector<int> argumentLayouts;
};

} // namespace dmc::select

#endif
