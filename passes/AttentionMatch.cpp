//===- AttentionMatch.cpp - the attention pattern, read off iteration spaces ===//
#include "passes/AttentionMatch.h"

#include "ir/IterationSpace.h"

#include <cmath>

using namespace mlir;

namespace dmc {
namespace {

StringRef namesOf(Value v) { return cast<dm::TensorType>(v.getType()).getNames(); }

bool has(StringRef s, char c) { return s.find(c) != StringRef::npos; }

/// Whether `a` and `b` hold the same letters.
bool sameSet(StringRef a, StringRef b) {
  return a.size() == b.size() && llvm::all_of(a, [&](char c) { return has(b, c); });
}

/// Letters of `a` not in `b`.
std::string minus(StringRef a, StringRef b) {
  std::string out;
  for (char c : a)
    if (!has(b, c))
      out.push_back(c);
  return out;
}

/// The dims a contraction sums over (in an operand, not in the result).
std::string reducedDims(dm::ContractOp c) {
  std::string r = minus(namesOf(c.getLhs()), namesOf(c.getResult()));
  for (char d : minus(namesOf(c.getRhs()), namesOf(c.getResult())))
    if (!has(r, d))
      r.push_back(d);
  return r;
}

/// A plain contraction: no epilogue, nothing fused into it yet.
bool plain(dm::ContractOp c) { return !c.getBias() && c.getEpilogue() == "none"; }

/// `v` seen through a saved activation (backward ops read forward values so).
Value throughSave(Value v) {
  if (auto save = v.getDefiningOp<dm::SaveOp>())
    return save.getX();
  return v;
}

/// The one user of `v` that is not a dm.save, or null (none or several).
Operation *onlyNonSaveUser(Value v) {
  Operation *found = nullptr;
  for (Operation *u : v.getUsers()) {
    if (isa<dm::SaveOp>(u))
      continue;
    if (found && found != u)
      return nullptr;
    found = u;
  }
  return found;
}

/// The other space operand of a contraction that reads `v`.
Value otherOperand(dm::ContractOp c, Value v) {
  return c.getLhs() == v ? c.getRhs() : c.getLhs();
}

bool isMask(Operation *op, double fill, char query, char key, Value lengths) {
  if (auto c = dyn_cast<dm::CausalMaskOp>(op))
    return c.getFill().convertToDouble() == fill && c.getKey()[0] == key &&
           (!query || c.getQuery()[0] == query);
  if (auto kp = dyn_cast<dm::KeyPaddingMaskOp>(op))
    return kp.getFill().convertToDouble() == fill && kp.getKey()[0] == key &&
           (!lengths || kp.getLengths() == lengths);
  return false;
}

Value maskInput(Operation *op) { return op->getOperand(0); }

} // namespace

std::optional<AttentionForward> matchAttentionForward(dm::SoftmaxOp softmax,
                                                      std::string &whyNot) {
  AttentionForward m;
  m.softmax = softmax;
  if (softmax.getDim().size() != 1)
    return whyNot = "the softmax reduces over several dims", std::nullopt;
  m.key = softmax.getDim()[0];
  double minusInf = -std::numeric_limits<double>::infinity();
  // Back from the softmax through elementwise masks to the scores.
  Value x = softmax.getX();
  while (Operation *def = x.getDefiningOp()) {
    if (!isMask(def, minusInf, 0, m.key, m.lengths))
      break;
    if (!x.hasOneUse())
      return whyNot = "a masked score tensor has other users", std::nullopt;
    if (auto kp = dyn_cast<dm::KeyPaddingMaskOp>(def))
      m.lengths = kp.getLengths();
    m.masks.insert(m.masks.begin(), def);
    x = maskInput(def);
  }
  m.scores = x.getDefiningOp<dm::ContractOp>();
  if (!m.scores)
    return whyNot = "the softmax input is not a contraction (through masks)", std::nullopt;
  if (!x.hasOneUse() || !plain(m.scores))
    return whyNot = "the scores have other users or an epilogue", std::nullopt;
  // Scores [batch..., query, key]: the key private to one operand, the query
  // to the other, one reduced (head) dim.
  unsigned keyOperand = has(dm::privateDims(m.scores, 1), m.key) ? 1 : 0;
  std::string keyPrivate = dm::privateDims(m.scores, keyOperand);
  std::string queryPrivate = dm::privateDims(m.scores, 1 - keyOperand);
  std::string reduced = reducedDims(m.scores);
  if (keyPrivate != std::string(1, m.key) || queryPrivate.size() != 1 || reduced.size() != 1)
    return whyNot = "the scores are not [batch, query, key] reduced over one head dim",
           std::nullopt;
  m.query = queryPrivate[0];
  m.head = reduced[0];
  m.q = m.scores->getOperand(1 - keyOperand);
  m.k = m.scores->getOperand(keyOperand);
  std::string batch = minus(namesOf(m.scores.getResult()), std::string{m.query, m.key});
  for (Operation *mask : m.masks)
    if (!isMask(mask, minusInf, m.query, m.key, m.lengths))
      return whyNot = "a causal mask is not over the scores' query and key", std::nullopt;
  // Forward: softmax -> [dropout] -> contraction with the values over the key.
  Value p = softmax.getResult();
  Operation *next = onlyNonSaveUser(p);
  if ((m.dropout = dyn_cast_or_null<dm::DropoutOp>(next))) {
    p = m.dropout.getResult();
    next = onlyNonSaveUser(p);
  }
  m.output = dyn_cast_or_null<dm::ContractOp>(next);
  if (!m.output || !plain(m.output) || m.output.getScale().convertToDouble() != 1.0)
    return whyNot = "the probabilities do not feed one plain contraction", std::nullopt;
  m.v = otherOperand(m.output, p);
  std::string vDims = namesOf(m.v).str();
  if (reducedDims(m.output) != std::string(1, m.key) ||
      !sameSet(vDims, batch + m.key + m.head) ||
      !sameSet(namesOf(m.output.getResult()), batch + m.query + m.head) ||
      !sameSet(namesOf(m.q), batch + m.query + m.head) ||
      !sameSet(namesOf(m.k), batch + m.key + m.head))
    return whyNot = "q, k, v and the output are not [batch, position, head dim] alike",
           std::nullopt;
  return m;
}

std::optional<AttentionBackward> matchAttentionBackward(AttentionForward fwd,
                                                        std::string &whyNot) {
  AttentionBackward m;
  Value p = fwd.softmax.getResult();
  Value dropped = fwd.dropout ? fwd.dropout.getResult() : p;
  for (Operation *save : p.getUsers())
    if (isa<dm::SaveOp>(save))
      for (Operation *u : save->getUsers())
        if (auto g = dyn_cast<dm::SoftmaxGradOp>(u); g && g.getY() == save->getResult(0))
          m.softmaxGrad = g;
  if (!m.softmaxGrad || m.softmaxGrad.getDim() != fwd.softmax.getDim())
    return whyNot = "no softmax gradient reads the saved probabilities", std::nullopt;
  Value dpd = m.softmaxGrad.getDy();
  if (fwd.dropout) {
    m.gradDropout = dpd.getDefiningOp<dm::DropoutOp>();
    if (!m.gradDropout || m.gradDropout.getId() != fwd.dropout.getId() ||
        m.gradDropout.getP() != fwd.dropout.getP() || !dpd.hasOneUse())
      return whyNot = "the probability gradient is not the forward's dropout", std::nullopt;
    dpd = m.gradDropout.getX();
  }
  m.gradScores = dpd.getDefiningOp<dm::ContractOp>();
  if (!m.gradScores || !plain(m.gradScores) || !dpd.hasOneUse())
    return whyNot = "the probability gradient is not one plain contraction", std::nullopt;
  Value vSide = throughSave(m.gradScores.getLhs()) == fwd.v ? m.gradScores.getLhs()
                                                            : m.gradScores.getRhs();
  if (throughSave(vSide) != fwd.v)
    return whyNot = "the probability gradient does not read the values", std::nullopt;
  m.savedV = vSide;
  m.gradOutput = otherOperand(m.gradScores, vSide);
  if (m.gradOutput.getType() != fwd.output.getResult().getType())
    return whyNot = "the output gradient's type differs from the output's", std::nullopt;
  for (Operation *u : m.gradOutput.getUsers())
    if (auto c = dyn_cast<dm::ContractOp>(u);
        c && c != m.gradScores && plain(c) && throughSave(otherOperand(c, m.gradOutput)) == dropped)
      m.gradV = c;
  if (!m.gradV || !sameSet(namesOf(m.gradV.getResult()), namesOf(fwd.v)))
    return whyNot = "no value gradient reads the saved probabilities", std::nullopt;
  // dS: the softmax gradient through the masks again (fill 0).
  Value ds = m.softmaxGrad.getResult();
  while (ds.hasOneUse() && isMask(*ds.getUsers().begin(), 0.0, fwd.query, fwd.key, fwd.lengths)) {
    m.gradMasks.push_back(*ds.getUsers().begin());
    ds = m.gradMasks.back()->getResult(0);
  }
  if (m.gradMasks.size() != fwd.masks.size())
    return whyNot = "the score gradient is not masked as the scores are", std::nullopt;
  double scale = fwd.scores.getScale().convertToDouble();
  for (Operation *u : ds.getUsers()) {
    auto c = dyn_cast<dm::ContractOp>(u);
    if (!c || !plain(c) || c.getScale().convertToDouble() != scale)
      return whyNot = "the score gradient feeds something other than the q and k gradients",
             std::nullopt;
    Value other = otherOperand(c, ds);
    if (throughSave(other) == fwd.k && sameSet(namesOf(c.getResult()), namesOf(fwd.q))) {
      m.gradQ = c;
      m.savedK = other;
    } else if (throughSave(other) == fwd.q && sameSet(namesOf(c.getResult()), namesOf(fwd.k))) {
      m.gradK = c;
      m.savedQ = other;
    } else {
      return whyNot = "a score gradient contraction is neither dq nor dk", std::nullopt;
    }
  }
  if (!m.gradQ || !m.gradK)
    return whyNot = "dq or dk is missing", std::nullopt;
  return m;
}

std::string attentionUnsupported(AttentionForward fwd) {
  auto q = cast<dm::TensorType>(fwd.q.getType());
  Type element = q.getElementType();
  for (Value v : {fwd.k, fwd.v, Value(fwd.output.getResult())})
    if (cast<dm::TensorType>(v.getType()).getElementType() != element)
      return "q, k, v and the output have different element types";
  if (!element.isBF16() && !element.isF16())
    return "the fused kernels take bf16 or f16, not f32";
  if (q.getRank() != 4)
    return "the fused kernels take [batch, heads, position, head dim]; q has dims '" +
           q.getNames().str() + "'";
  int64_t d = q.getSize(fwd.head);
  if (d % 16 != 0 || d < 16 || d > kMaxFusedHeadDim)
    return "head dim " + std::to_string(d) + " is not a multiple of 16 in [16, " +
           std::to_string(kMaxFusedHeadDim) + "]";
  return "";
}

} // namespace dmc
