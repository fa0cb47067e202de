//===- GradientCheck.cpp - dm-autodiff against finite differences ---------===//
#include "GradientCheck.h"

#include "compiler/Driver.h"
#include "compiler/Interpreter.h"
#include "compiler/TensorIO.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <random>

using namespace mlir;

namespace dmc::test {

GradientCheckResult checkGradients(ModuleOp forward, int samplesPerArg, uint64_t seed,
                                   double h) {
  GradientCheckResult r;
  func::FuncOp f = layerFunction(forward);
  OwningOpRef<ModuleOp> trained = forward.clone();
  PassManager pm(forward.getContext());
  pm.addNestedPass<func::FuncOp>(createDmAutodiff());
  if (failed(pm.run(*trained))) {
    r.error = "dm-autodiff failed";
    return r;
  }
  func::FuncOp g = layerFunction(*trained);
  InterpreterOptions options{Precision::F64, seed};

  std::vector<HostTensor> args;
  for (unsigned n = 0; n < f.getNumArguments(); ++n)
    args.push_back(generateArgument(f, n, seed, Precision::F64));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<HostTensor> dys;
  for (Type t : f.getResultTypes()) {
    HostTensor dy = allocateFor(t);
    for (double &v : dy.data)
      v = uniform(rng);
    dys.push_back(dy);
  }

  auto loss = [&](const std::vector<HostTensor> &in) -> double {
    auto out = interpret(f, in, options);
    if (!out) {
      r.error = llvm::toString(out.takeError());
      return NAN;
    }
    double l = 0;
    for (size_t k = 0; k < dys.size(); ++k)
      for (size_t e = 0; e < dys[k].data.size(); ++e)
        l += (*out)[k].data[e] * dys[k].data[e];
    return l;
  };

  std::vector<HostTensor> trainArgs = args;
  trainArgs.insert(trainArgs.end(), dys.begin(), dys.end());
  auto results = interpret(g, trainArgs, options);
  if (!results) {
    r.error = llvm::toString(results.takeError());
    return r;
  }
  size_t gradIndex = f.getNumResults();
  for (unsigned n = 0; n < f.getNumArguments(); ++n) {
    auto type = cast<dm::TensorType>(f.getArgument(n).getType());
    if (!isa<FloatType>(type.getElementType()))
      continue;
    const HostTensor &grad = (*results)[gradIndex++];
    size_t count = args[n].data.size();
    std::vector<size_t> elements;
    for (size_t e = 0; e < count; ++e)
      elements.push_back(e);
    std::shuffle(elements.begin(), elements.end(), rng);
    elements.resize(std::min<size_t>(count, samplesPerArg));
    for (size_t e : elements) {
      std::vector<HostTensor> plus = args, minus = args;
      plus[n].data[e] += h;
      minus[n].data[e] -= h;
      double fd = (loss(plus) - loss(minus)) / (2 * h);
      double an = grad.data[e];
      double err = std::abs(fd - an) / (1.0 + std::abs(fd));
      ++r.checked;
      if (!(err <= r.worstError)) {
        r.worstError = std::isnan(err) ? INFINITY : err;
        r.worstWhere = llvm::formatv("argument {0}[{1}]: fd={2:e}, analytic={3:e}", n, e,
                                     fd, an);
      }
    }
  }
  return r;
}

} // namespace dmc::test
