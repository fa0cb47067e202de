//===- Interpreter.cpp - reference evaluation of dm functions -------------===//
#include "compiler/Interpreter.h"

#include "compiler/HostKernels.h"
#include "compiler/evaluation/Evaluation.h"
#include "ir/IterationSpace.h"
#include "ir/DmDialect.h"
#include "runtime/format/device/Float16.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

using namespace mlir;

namespace dmc {

HostTensor allocateFor(Type type) {
  auto t = cast<dm::TensorType>(type);
  return HostTensor(t.getNames().str(), std::vector<int64_t>(t.getShape().begin(),
                                                             t.getShape().end()));
}

const char *precisionName(Precision p) {
  switch (p) {
  case Precision::F32:
    return "f32";
  case Precision::F64:
    return "f64";
  case Precision::Storage:
    return "storage";
  }
  return "?";
}

double roundToElementType(double v, Type element) {
  if (element.isBF16())
    return dmrt::bf16ToFloat(dmrt::floatToBf16(static_cast<float>(v)));
  if (element.isF16())
    return dmrt::halfToFloat(dmrt::floatToHalf(static_cast<float>(v)));
  if (element.isF32())
    return static_cast<double>(static_cast<float>(v));
  return v;
}

void roundToStorage(HostTensor &t, Type type) {
  Type element = cast<dm::TensorType>(type).getElementType();
  for (double &v : t.data)
    v = roundToElementType(v, element);
}

int64_t firstUnrepresentable(const HostTensor &t, Type type) {
  Type element = cast<dm::TensorType>(type).getElementType();
  for (size_t e = 0; e < t.data.size(); ++e) {
    double v = t.data[e];
    double r = roundToElementType(v, element);
    if (!(r == v || (std::isnan(r) && std::isnan(v))))
      return static_cast<int64_t>(e);
  }
  return -1;
}

namespace {

/// Ops of a function body that only name memory another op wrote (the
/// bundle's aliases): nothing is stored, so nothing is rounded.
bool isView(Operation &op) {
  if (isa<dm::RenameOp, dm::SaveOp, dm::UnstackOp>(op))
    return true;
  auto stack = dyn_cast<dm::StackOp>(op);
  return stack && stack.isView();
}

llvm::Error failure(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

template <typename T> class Evaluator final : public dm::Evaluation {
  using K = HostKernels<T>;

public:
  Evaluator(const InterpreterOptions &options) : options(options) {}

  llvm::Expected<std::vector<HostTensor>> run(func::FuncOp f,
                                              const std::vector<HostTensor> &args) {
    if (args.size() != f.getNumArguments())
      return failure(llvm::formatv("@{0} takes {1} arguments, got {2}", f.getSymName(),
                                   f.getNumArguments(), args.size()));
    for (auto [n, arg] : llvm::enumerate(f.getArguments())) {
      HostTensor expected = allocateFor(arg.getType());
      if (args[n].dims != expected.dims || args[n].shape != expected.shape)
        return failure(llvm::formatv("argument {0} of @{1} must have dims '{2}' and type "
                                     "{3}, got dims '{4}'",
                                     n, f.getSymName(), expected.dims, arg.getType(),
                                     args[n].dims));
      values[key(arg)] = args[n];
      if (storage())
        roundToStorage(values[key(arg)], arg.getType());
    }
    return runBlock(f.getBody().front());
  }

  /// Evaluates one op (e.g. a dm.kernel) on `operands`.
  llvm::Expected<std::vector<HostTensor>> runOp(Operation *op,
                                                const std::vector<HostTensor> &operands) {
    if (options.roundingSpreads)
      if (auto kernel = dyn_cast<dm::KernelOp>(op))
        for (Value v : kernel.getBody().front().getTerminator()->getOperands())
          if (auto c = v.getDefiningOp<dm::ContractOp>())
            for (Value operand : c->getOperands())
              keep.insert(key(operand));
    if (operands.size() != op->getNumOperands())
      return failure(llvm::formatv("'{0}' takes {1} operands, got {2}",
                                   op->getName().getStringRef(), op->getNumOperands(),
                                   operands.size()));
    for (auto [v, t] : llvm::zip(op->getOperands(), operands)) {
      values[key(v)] = t;
      if (storage())
        roundToStorage(values[key(v)], v.getType());
    }
    if (llvm::Error e = evaluate(*op))
      return e;
    store(*op, 0);
    if (options.roundingSpreads)
      spreadsOf(*op, *options.roundingSpreads);
    std::vector<HostTensor> results;
    for (Value r : op->getResults())
      results.push_back(values[key(r)]);
    return results;
  }

private:
  bool storage() const { return options.precision == Precision::Storage; }

  /// InterpreterOptions::roundingSpreads for `op`, once it was evaluated
  /// (the region's values are still bound).
  void spreadsOf(Operation &op, std::vector<HostTensor> &spreads) {
    spreads.assign(op.getNumResults(), HostTensor());
    auto kernel = dyn_cast<dm::KernelOp>(op);
    if (!kernel)
      return;
    Operation *yield = kernel.getBody().front().getTerminator();
    for (auto [n, v] : llvm::enumerate(yield->getOperands())) {
      auto c = v.template getDefiningOp<dm::ContractOp>();
      if (!c || !c->hasAttr(dm::kRescaledRoundingAttr))
        continue;
      auto squared = [](HostTensor t) {
        for (double &x : t.data)
          x *= x;
        return t;
      };
      double scale = c.getScale().convertToDouble();
      HostTensor &s = spreads[n];
      s = allocateFor(c.getResult().getType());
      K::contract(squared(get(c.getLhs())), squared(get(c.getRhs())), scale * scale, s);
      for (double &x : s.data)
        x = std::sqrt(x);
    }
  }

  /// Storage precision: the results of `op`, the `index`-th op of the
  /// function body, as the GPU stores them (views store nothing).
  void store(Operation &op, int index) {
    if (!storage() || isView(op) || index == options.plantUnroundedOp)
      return;
    for (Value r : op.getResults())
      roundToStorage(values[key(r)], r.getType());
  }

  /// For each op of `block`, the values of the block (its arguments and
  /// results) that no later op reads, uses in nested regions included: freed
  /// once the op has run, so a full-size layer holds only its live tensors
  /// (gpt2-medium's [query x key] values inside fused attention regions are
  /// about 1 GB each). What the terminator returns stays, and so do the
  /// operands InterpreterOptions::roundingSpreads reads after the run.
  std::vector<std::vector<Value>> deadAfter(Block &block) {
    std::vector<std::vector<Value>> dead(block.getOperations().size());
    llvm::DenseMap<Operation *, size_t> index;
    for (Operation &op : block)
      index[&op] = index.size();
    auto retire = [&](Value v) {
      if (keep.count(key(v)))
        return;
      // Unused results go right after their op; unused arguments stay.
      Operation *last = v.getDefiningOp();
      for (OpOperand &use : v.getUses()) {
        Operation *user = block.findAncestorOpInBlock(*use.getOwner());
        if (!user || user->hasTrait<OpTrait::IsTerminator>())
          return; // used outside the block or returned: keep it
        if (!last || index[user] > index[last])
          last = user;
      }
      if (last)
        dead[index[last]].push_back(v);
    };
    for (BlockArgument arg : block.getArguments())
      retire(arg);
    for (Operation &op : block)
      for (Value r : op.getResults())
        retire(r);
    return dead;
  }

  /// Evaluates the ops of `block` (arguments already bound) up to its
  /// terminator, whose operands are returned.
  llvm::Expected<std::vector<HostTensor>> runBlock(Block &block) {
    bool body = kernelDepth == 0; // the function body, not a kernel's
    std::vector<std::vector<Value>> dead = deadAfter(block);
    int index = 0;
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        std::vector<HostTensor> results;
        for (Value v : op.getOperands())
          results.push_back(values[key(v)]);
        return results;
      }
      if (llvm::Error e = evaluate(op))
        return e;
      if (body)
        store(op, index);
      else if (op.hasAttr(dm::kRoundedAttr) && (storage() || options.roundKernelOperands))
        for (Value r : op.getResults()) // a kernel value stored in its element type
          roundToStorage(values[key(r)], r.getType());
      for (Value v : dead[size_t(index)])
        values.erase(key(v));
      ++index;
    }
    return failure("block has no terminator");
  }

  llvm::Error evaluateKernel(dm::KernelOp kernel) {
    Block &body = kernel.getBody().front();
    for (auto [in, arg] : llvm::zip(kernel.getInputs(), body.getArguments()))
      values[key(arg)] = get(in);
    ++kernelDepth;
    auto outs = runBlock(body);
    --kernelDepth;
    if (!outs)
      return outs.takeError();
    // The region's results now live on as the kernel's (copies).
    for (Value v : body.getTerminator()->getOperands())
      if (!keep.count(key(v)))
        values.erase(key(v));
    for (auto [n, t] : llvm::enumerate(*outs))
      values[key(kernel.getResult(n))] = std::move(t);
    return llvm::Error::success();
  }

  static const void *key(Value v) { return v.getAsOpaquePointer(); }
  const HostTensor &get(Value v) { return values[key(v)]; }

  llvm::Error evaluate(Operation &op) {
    if (auto kernel = dyn_cast<dm::KernelOp>(op))
      return evaluateKernel(kernel);
    auto evaluable = dyn_cast<dm::EvaluableOpInterface>(op);
    if (!evaluable)
      return failure(llvm::formatv("the interpreter cannot evaluate '{0}' (no "
                                   "EvaluableOpInterface model, compiler/evaluation/)",
                                   op.getName().getStringRef()));
    evaluable.evaluate(*this);
    return llvm::Error::success();
  }

  // dm::Evaluation
  const HostTensor &operand(Value v) override { return get(v); }
  HostTensor &result(Operation *op, unsigned n) override {
    HostTensor &t = values[key(op->getResult(n))];
    t = allocateFor(op->getResult(n).getType());
    return t;
  }
  bool inDouble() const override { return std::is_same_v<T, double>; }
  uint64_t seed() const override { return options.seed; }

  const InterpreterOptions &options;
  /// > 0 while evaluating the body of a dm.kernel.
  int kernelDepth = 0;
  /// Node-based: references to tensors stay valid while results are added
  /// and dead ones are erased.
  std::unordered_map<const void *, HostTensor> values;
  /// Values never freed early (deadAfter).
  std::unordered_set<const void *> keep;
};

} // namespace

llvm::Expected<std::vector<HostTensor>> interpretOp(Operation *op,
                                                    const std::vector<HostTensor> &operands,
                                                    const InterpreterOptions &options) {
  evaluation::attachEvaluationModels(*op->getContext());
  if (options.precision == Precision::F64)
    return Evaluator<double>(options).runOp(op, operands);
  return Evaluator<float>(options).runOp(op, operands);
}

llvm::Expected<std::vector<HostTensor>> interpret(func::FuncOp f,
                                                  const std::vector<HostTensor> &args,
                                                  const InterpreterOptions &options) {
  evaluation::attachEvaluationModels(*f->getContext());
  if (options.precision == Precision::F64)
    return Evaluator<double>(options).run(f, args);
  return Evaluator<float>(options).run(f, args);
}

} // namespace dmc
