//===- KernelLowering.cpp - dm ops of a kernel -> node graph ---------------===//
//
// The per-op arithmetic follows the interpreter (compiler/HostKernels.cpp)
// in fp32, constant for constant, except exp and erf (dmcExp, dmcErf: within
// 1e-6, far below the 16-bit rounding of the outputs); dropout uses the same Philox counters.
//
//===----------------------------------------------------------------------===//
#include "codegen/NodeGraph.h"
#include "ir/StorageType.h"

#include "runtime/format/device/Philox.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace dmc::codegen {

dmrt::DType storageOf(Type t) {
  std::optional<dmrt::DType> s = dm::storageDType(t);
  return s == dmrt::DType::BF16 || s == dmrt::DType::F16 || s == dmrt::DType::I32
             ? *s
             : dmrt::DType::F32;
}

namespace {

/// A float constant that parses back to exactly `(float)v`, as the
/// interpreter's static_cast<float>.
std::string floatLiteral(double v) {
  float f = static_cast<float>(v);
  if (std::isinf(f))
    return f < 0 ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9ef", f);
  return buf;
}


class Lowering {
public:
  Lowering(dm::KernelOp kernel, const KernelSpace &space, NodeGraph &graph)
      : kernel(kernel), space(space), g(graph) {}

  llvm::Error run() {
    Block &body = kernel.getBody().front();
    for (Operation &op : body.without_terminator())
      if (llvm::Error e = lower(op))
        return e;
    for (Value v : body.getTerminator()->getOperands())
      g.outputs.push_back(get(v));
    return llvm::Error::success();
  }

private:
  llvm::Error fail(const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kernel '" + kernel.getName() + "': " + msg);
  }
  int map(std::string code, std::vector<int> deps, bool pointwise = false) {
    return g.map(std::move(code), std::move(deps), pointwise);
  }
  int reduce(const char *combine, std::string init, int of) {
    return g.reduce(combine, std::move(init), of);
  }

  std::string loadExpr(unsigned arg) {
    Type t = kernel.getInputs()[arg].getType();
    dmrt::DType s = storageOf(t);
    std::string p = "in" + std::to_string(arg), o = "off_in" + std::to_string(arg);
    if (s == dmrt::DType::BF16)
      return "dmcLoadBf16(" + p + ", " + o + ")";
    if (s == dmrt::DType::F16)
      return "dmcLoadHalf(" + p + ", " + o + ")";
    if (s == dmrt::DType::I32)
      return "((float)" + p + "[" + o + "])";
    return "dmcLoad(" + p + ", " + o + ")";
  }

  /// The node of `v`: a load for kernel inputs.
  int get(Value v) {
    if (auto it = valueNode.find(v); it != valueNode.end())
      return it->second;
    Node node;
    g.unguardedLoads.insert(cast<BlockArgument>(v).getArgNumber());
    node.code = loadExpr(cast<BlockArgument>(v).getArgNumber());
    int id = g.add(std::move(node));
    valueNode[v] = id;
    return id;
  }
  void set(Value v, int id) { valueNode[v] = id; }

  /// Why a reducing op cannot be generated here: the dims it reduces must be
  /// exactly the kernel's rows. Empty when they are.
  std::string checkRows(Operation *op, llvm::StringRef dims) {
    std::string a = dims.str(), b = space.row;
    llvm::sort(a);
    llvm::sort(b);
    if (a == b)
      return "";
    return (op->getName().getStringRef() + " reduces over '" + dims +
            "' but the kernel's rows are '" + space.row + "'")
        .str();
  }

  /// A sum of node `of` over `op`'s reduced dims: over the rows, or (column
  /// sums) over the outer points.
  int sum(Operation *op, int of) {
    std::string dims = cast<dm::IterationSpaceOpInterface>(op).getReductionDims(), outer = space.outer;
    llvm::sort(dims);
    llvm::sort(outer);
    if (space.columnSums && dims == outer) {
      if (g.nodes[of].outer)
        problem = (op->getName().getStringRef() + " sums a value with no row dims over the outer dims").str();
      return g.columnSum(of);
    }
    return reduce("DmcSum", "0.f", of);
  }

  llvm::Error lower(Operation &op);
  std::string problem; ///< why `op` cannot be lowered (set by lower's cases)

  dm::KernelOp kernel;
  const KernelSpace &space;
  NodeGraph &g;
  llvm::DenseMap<Value, int> valueNode;
};

llvm::Error Lowering::lower(Operation &op) {
  auto x = [&](unsigned n) { return get(op.getOperand(n)); };
  std::string count = std::to_string(space.rowPoints) + ".f";
  bool ok = true;
  problem.clear();
  llvm::TypeSwitch<Operation *>(&op)
      .Case([&](dm::BiasAddOp o) { set(o, map("$0 + $1", {x(0), x(1)})); })
      .Case([&](dm::AddOp o) { set(o, map("$0 + $1", {x(0), x(1)})); })
      .Case([&](dm::ScaleOp o) {
        set(o, map("$0 * " + floatLiteral(o.getFactor().convertToDouble()), {x(0)}));
      })
      .Case([&](dm::ActivationOp o) {
        switch (o.getActivationKind()) {
        case dm::ActivationKind::Relu:
          set(o, map("$0 > 0.f ? $0 : 0.f", {x(0)}));
          return;
        case dm::ActivationKind::Gelu:
          set(o, map("0.5f * $0 * (1.f + dmcErf($0 * 7.0710678118654752e-01f))", {x(0)}));
          return;
        case dm::ActivationKind::GeluTanh:
          set(o, map("0.5f * $0 * (1.f + tanhf(7.9788456080286536e-01f * ($0 + 4.4715e-02f * $0 * "
                     "$0 * $0)))",
                     {x(0)}));
          return;
        }
        llvm_unreachable("every activation kind is handled");
      })
      .Case([&](dm::ActivationGradOp o) {
        int dy = x(0), v = x(1);
        int d = -1;
        switch (o.getActivationKind()) {
        case dm::ActivationKind::Relu:
          d = map("$0 > 0.f ? 1.f : 0.f", {v});
          break;
        case dm::ActivationKind::Gelu:
          d = map("0.5f * (1.f + dmcErf($0 * 7.0710678118654752e-01f)) + $0 * "
                  "3.9894228040143268e-01f * dmcExp(-0.5f * $0 * $0)",
                  {v});
          break;
        case dm::ActivationKind::GeluTanh: {
          int t = map("tanhf(7.9788456080286536e-01f * ($0 + 4.4715e-02f * $0 * $0 * $0))", {v});
          d = map("0.5f * (1.f + $1) + 0.5f * $0 * (1.f - $1 * $1) * 7.9788456080286536e-01f * "
                  "(1.f + 1.34145e-01f * $0 * $0)",
                  {v, t});
          break;
        }
        }
        set(o, map("$0 * $1", {dy, d}));
      })
      .Case([&](dm::DropoutOp o) {
        double p = o.getP().convertToDouble();
        int k = static_cast<int>(g.draws.size());
        g.draws.push_back({static_cast<int64_t>(o.getId()), o.getOrder().str()});
        std::string keep = llvm::formatv("{0} >= {1}u", NodeGraph::wordName(k),
                                         dmrt::dropoutThreshold(p));
        set(o, map(keep + " ? $0 * " + floatLiteral(1.0 / (1.0 - p)) + " : 0.f", {x(0)},
                   /*pointwise=*/true));
      })
      .Case([&](dm::CausalMaskOp o) {
        std::string cond = std::string("i_") + o.getKey().str() + " > i_" + o.getQuery().str();
        set(o, map(cond + " ? " + floatLiteral(o.getFill().convertToDouble()) + " : $0",
                   {x(0)}, true));
      })
      .Case([&](dm::KeyPaddingMaskOp o) {
        std::string cond = "(float)i_" + o.getKey().str() + " >= $1";
        set(o, map(cond + " ? " + floatLiteral(o.getFill().convertToDouble()) + " : $0",
                   {x(0), x(1)}, true));
      })
      .Case([&](dm::SoftmaxOp o) {
        if (!(problem = checkRows(o, o.getDim())).empty())
          return;
        int in = x(0);
        int mx = reduce("DmcMax", "__int_as_float(0xff800000)", in);
        int e = map("$1 == __int_as_float(0xff800000) ? 0.f : dmcExp($0 - $1)", {in, mx});
        int sum = reduce("DmcSum", "0.f", e);
        int inv = map("$0 > 0.f ? 1.f / $0 : 0.f", {sum});
        set(o, map("$0 * $1", {e, inv}));
      })
      .Case([&](dm::SoftmaxGradOp o) {
        if (!(problem = checkRows(o, o.getDim())).empty())
          return;
        int y = x(0), dy = x(1);
        int dot = reduce("DmcSum", "0.f", map("$0 * $1", {y, dy}));
        set(o, map("$0 * ($1 - $2)", {y, dy, dot}));
      })
      .Case([&](dm::LayerNormOp o) {
        if (!(problem = checkRows(o, o.getDims())).empty())
          return;
        int in = x(0), g = x(1), b = x(2);
        int mu = map("$0 / " + count, {reduce("DmcSum", "0.f", in)});
        int c = map("$0 - $1", {in, mu});
        int var = reduce("DmcSum", "0.f", map("$0 * $0", {c}));
        int rs = map("1.f / sqrtf($0 / " + count + " + " +
                         floatLiteral(o.getEps().convertToDouble()) + ")",
                     {var});
        set(o.getY(), map("$0 * $1 * $2 + $3", {c, rs, g, b}));
        set(o.getMean(), mu);
        set(o.getRstd(), rs);
      })
      .Case([&](dm::LayerNormGradInputOp o) {
        if (!(problem = checkRows(o, o.getDims())).empty())
          return;
        int dy = x(0), in = x(1), mean = x(2), rstd = x(3), g = x(4);
        int gg = map("$0 * $1", {dy, g});
        int xh = map("($0 - $1) * $2", {in, mean, rstd});
        int sg = reduce("DmcSum", "0.f", gg);
        int sgx = reduce("DmcSum", "0.f", map("$0 * $1", {gg, xh}));
        set(o, map("$0 * ($1 - $2 / " + count + " - $3 * ($4 / " + count + "))",
                   {rstd, gg, sg, xh, sgx}));
      })
      .Case([&](dm::LayerNormGradParamsOp o) {
        int dy = x(0), in = x(1), mean = x(2), rstd = x(3);
        set(o.getDgamma(), sum(o, map("$0 * ($1 - $2) * $3", {dy, in, mean, rstd})));
        set(o.getDbeta(), sum(o, dy));
      })
      .Case([&](dm::ReduceSumOp o) { set(o, sum(o, x(0))); })
      .Case<dm::BroadcastOp, dm::TransposeOp>([&](auto o) { set(o, x(0)); })
      .Case([&](dm::StackOp o) {
        // Select the slice first: each point loads only its own input.
        std::string dim = o.getDim().str();
        std::vector<int> parts;
        std::string code = "0.f";
        for (size_t n = o.getInputs().size(); n-- > 0;) {
          std::string part;
          std::string cond = "i_" + dim + " == " + std::to_string(n);
          if (auto arg = dyn_cast<BlockArgument>(o.getInputs()[n])) {
            part = loadExpr(arg.getArgNumber());
            auto [it, fresh] = g.loadGuards.insert({arg.getArgNumber(), cond});
            if (!fresh && it->second != cond)
              g.unguardedLoads.insert(arg.getArgNumber());
          } else {
            part = "$" + std::to_string(parts.size());
            parts.push_back(x(n));
          }
          code = cond + " ? " + part + " : " + code;
        }
        set(o, map(code, parts, true));
      })
      .Default([&](Operation *) { ok = false; });
  if (!problem.empty())
    return fail(problem);
  if (!ok)
    return fail("cannot generate code for '" + op.getName().getStringRef() + "'");
  return llvm::Error::success();
}

} // namespace

llvm::Error lowerKernel(dm::KernelOp kernel, const KernelSpace &space, NodeGraph &graph) {
  return Lowering(kernel, space, graph).run();
}

} // namespace dmc::codegen
