//===- SaveDropoutBits.cpp - dm-save-dropout-bits -------------------------===//
//
// A dropout's backward is the same dm.dropout (same id, p and order) applied
// to the gradient, so the backward kernel draws every Philox word again: on
// an H200 bert-large's activation-gradient kernel (16.8M elements) takes
// 35.8 us where its bytes need about 22. This pass has the first kernel
// holding a dropout also write the dropout's keep decisions, 32 per i32 word
// (dm.dropout_keep_bits, `unmasked`: 1/16 of a bf16 tensor), saved for the
// later kernels holding the same dropout, which apply them
// (dm.dropout_apply_bits) instead of drawing. It reads the dropout ops'
// attributes and the kernels' block order only.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/IterationSpace.h"
#include "passes/KernelBody.h"
#include "passes/SaveDropoutBits.h"
#include "passes/TensorNames.h"

#include "mlir/IR/Builders.h"

#include <map>
#include <optional>
#include <set>

namespace dmc {
#define GEN_PASS_DEF_DMSAVEDROPOUTBITS
#include "passes/Passes.h.inc"
} // namespace dmc

using namespace mlir;

namespace dmc {
namespace {

/// Keep decisions are packed along a dropout's innermost counter dim: whole
/// words of it, so that a group of eight draws is one byte of one word.
constexpr int64_t kWordBits = 32;

dm::TensorType tensorOf(Value v) { return cast<dm::TensorType>(v.getType()); }

/// The keep bits of `d`: its tensor's dims with `key` replaced by `word`.
dm::TensorType bitsTypeOf(dm::DropoutOp d, char key, char word) {
  dm::TensorType t = tensorOf(d.getX());
  std::string names = t.getNames().str();
  SmallVector<int64_t> shape(t.getShape());
  size_t at = names.find(key);
  names[at] = word;
  shape[at] /= kWordBits;
  return dm::TensorType::get(t.getContext(), names, shape, IntegerType::get(t.getContext(), 32));
}

std::string bitsName(dm::DropoutOp d) { return keepBitsName(d.getId()); }

/// `k` again with one more result, `bits` of `d`'s dropout: the region moves
/// over and yields the keep bits; readers of `k` read the new kernel.
dm::KernelOp addBitsOutput(dm::KernelOp k, dm::DropoutOp d, dm::TensorType bits, char key,
                           char word) {
  OpBuilder inner(d->getNextNode());
  auto keep = inner.create<dm::DropoutKeepBitsOp>(
      d.getLoc(), bits, d.getX(), d.getPAttr(), d.getIdAttr(), d.getOrderAttr(),
      inner.getStringAttr(std::string(1, key)), inner.getStringAttr(std::string(1, word)),
      inner.getUnitAttr());
  if (Attribute cls = d->getAttr(dm::kClassAttr))
    keep->setAttr(dm::kClassAttr, cls);
  Operation *yield = k.getBody().front().getTerminator();
  yield->insertOperands(yield->getNumOperands(), keep.getResult());

  SmallVector<Type> results(k.getResultTypes());
  results.push_back(bits);
  OpBuilder b(k);
  auto rebuilt = b.create<dm::KernelOp>(k.getLoc(), results, k.getInputs(), k.getNameAttr());
  for (NamedAttribute attr : k->getDiscardableAttrs())
    rebuilt->setAttr(attr.getName(), attr.getValue());
  // The new result is named after its dropout, not numbered: a number free
  // here may be taken in a graph configured otherwise (another epilogue).
  SmallVector<Attribute> named;
  if (auto stamp = k->getAttrOfType<ArrayAttr>(names::kNamesAttr))
    named.assign(stamp.begin(), stamp.end());
  named.push_back(b.getStringAttr(bitsName(d)));
  rebuilt->setAttr(names::kNamesAttr, b.getArrayAttr(named));
  rebuilt.getBody().takeBody(k.getBody());
  for (unsigned n = 0; n < k->getNumResults(); ++n)
    k->getResult(n).replaceAllUsesWith(rebuilt->getResult(n));
  k.erase();
  return rebuilt;
}

/// `d` in kernel `k` reads its mask from `saved` (a new input) instead.
void applySavedBits(dm::KernelOp k, dm::DropoutOp d, Value saved, char key, char word) {
  k->insertOperands(k->getNumOperands(), saved);
  Block &body = k.getBody().front();
  Value bits = body.addArgument(saved.getType(), saved.getLoc());
  OpBuilder b(d);
  auto apply = b.create<dm::DropoutApplyBitsOp>(
      d.getLoc(), d.getType(), d.getX(), bits, d.getPAttr(),
      b.getStringAttr(std::string(1, key)), b.getStringAttr(std::string(1, word)));
  for (NamedAttribute attr : d->getDiscardableAttrs())
    apply->setAttr(attr.getName(), attr.getValue());
  d.getResult().replaceAllUsesWith(apply.getResult());
  d.erase();
}

using DropoutUse = std::pair<dm::KernelOp, dm::DropoutOp>;

/// Each dropout id's ops in kernels (fused attention aside), in block order,
/// but for the ids in `skip`.
std::map<int64_t, SmallVector<DropoutUse>> dropoutUses(func::FuncOp func,
                                                       const std::set<int64_t> &skip) {
  std::map<int64_t, SmallVector<DropoutUse>> byId;
  for (auto k : func.getBody().front().getOps<dm::KernelOp>()) {
    if (k->hasAttr(dm::kFusedAttr))
      continue;
    for (auto d : k.getBody().front().getOps<dm::DropoutOp>())
      if (!skip.count(d.getId()))
        byId[d.getId()].push_back({k, d});
  }
  return byId;
}

/// The uses after the first that draw the first kernel's mask again (same
/// `p` and counter order, another kernel).
SmallVector<DropoutUse> laterDraws(ArrayRef<DropoutUse> uses) {
  auto [first, draw] = uses.front();
  SmallVector<DropoutUse> later;
  for (auto [k, d] : llvm::drop_begin(uses))
    if (k != first && d.getPAttr() == draw.getPAttr() && d.getOrder() == draw.getOrder())
      later.push_back({k, d});
  return later;
}

/// Whether `draw`'s counter dim holds whole words of keep bits.
bool packs(dm::DropoutOp draw) {
  return tensorOf(draw.getX()).getSize(draw.getOrder().back()) % kWordBits == 0;
}

/// Saves the keep bits of the first dropout not in `done` that a later
/// kernel draws again, its words along dim letter `wordOf[id]`; returns its
/// id (none: nothing left).
std::optional<int64_t> saveNext(func::FuncOp func, const std::set<int64_t> &done,
                                const std::map<int64_t, char> &wordOf, bool remarks) {
  for (auto &[id, uses] : dropoutUses(func, done)) {
    auto [first, draw] = uses.front();
    SmallVector<DropoutUse> later = laterDraws(uses);
    if (later.empty())
      continue;
    std::string whyNot;
    char key = draw.getOrder().back();
    int64_t keys = tensorOf(draw.getX()).getSize(key);
    char word = wordOf.count(id) ? wordOf.at(id) : 0;
    if (!packs(draw))
      whyNot = "its innermost counter dim '" + std::string(1, key) + "' has " +
               std::to_string(keys) + " elements, not a multiple of 32";
    else if (!word)
      whyNot = "no dimension letter is free for the keep bits' words";
    if (!whyNot.empty()) {
      if (remarks)
        draw.emitRemark() << "dropout " << id << " is drawn again in later kernels: "
                          << whyNot;
      return id;
    }
    // The tensors added take the next free names; none before them moves.
    names::stampTensorNames(func);
    dm::TensorType bits = bitsTypeOf(draw, key, word);
    dm::KernelOp writer = addBitsOutput(first, draw, bits, key, word);
    OpBuilder b(writer);
    b.setInsertionPointAfter(writer);
    auto saved = b.create<dm::SaveOp>(writer.getLoc(), bits,
                                      writer->getResult(writer->getNumResults() - 1));
    saved->setAttr(names::kNamesAttr, b.getArrayAttr({b.getStringAttr(bitsName(draw) + ".saved")}));
    for (auto [k, d] : later)
      applySavedBits(k, d, saved, key, word);
    return id;
  }
  return std::nullopt;
}

struct SaveDropoutBits : impl::DmSaveDropoutBitsBase<SaveDropoutBits> {
  using DmSaveDropoutBitsBase::DmSaveDropoutBitsBase;
  void runOnOperation() override {
    saveDropoutBits(getOperation(), remarks, std::set<int64_t>(drawn.begin(), drawn.end()));
  }
};

constexpr llvm::StringLiteral kBitsPrefix = "dropout", kBitsSuffix = ".keep_bits";

} // namespace

void saveDropoutBits(func::FuncOp func, bool remarks, const std::set<int64_t> &drawn) {
  // Each dropout that can save its bits has its own word letter, whichever
  // others save theirs: a kernel's signature (its tensors' dims) is then the
  // same in every graph where its dropouts are saved alike, and one tuning
  // database prices all of them.
  std::map<int64_t, char> wordOf;
  std::string letters = unusedDimLetters(func);
  for (int64_t id : savableDropouts(func))
    if (wordOf.size() < letters.size())
      wordOf[id] = letters[wordOf.size()];
  std::set<int64_t> done = drawn;
  // One dropout at a time: rebuilding its first kernel replaces that op.
  while (std::optional<int64_t> id = saveNext(func, done, wordOf, remarks))
    done.insert(*id);
}

std::string keepBitsName(int64_t id) {
  return (kBitsPrefix + std::to_string(id) + kBitsSuffix).str();
}

std::optional<int64_t> keepBitsDropout(llvm::StringRef name) {
  int64_t id;
  if (!name.consume_front(kBitsPrefix) || !name.consume_back(kBitsSuffix) ||
      name.getAsInteger(10, id) || id < 0)
    return std::nullopt;
  return id;
}

std::set<int64_t> savableDropouts(func::FuncOp func) {
  std::set<int64_t> ids;
  for (auto &[id, uses] : dropoutUses(func, {}))
    if (!laterDraws(uses).empty() && packs(uses.front().second))
      ids.insert(id);
  return ids;
}

} // namespace dmc
