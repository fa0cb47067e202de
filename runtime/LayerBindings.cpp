//===- LayerBindings.cpp - Caller buffers bound to a layer's tensors ------===//
#include "runtime/LayerBindings.h"

#include <cstdio>

namespace dmrt {
namespace {

std::string pointerString(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

} // namespace

LayerBindings::LayerBindings(const Manifest &m, const LayerPlan &p)
    : m_(&m), p_(&p), ptr_(p.callerTensors.size(), nullptr),
      start_(p.buffers.size(), nullptr) {}

bool LayerBindings::bind(const std::string &name, void *ptr, int64_t bytes, DType dtype,
                         const std::vector<int64_t> &shape, std::string &error) {
  int64_t index = check(name, ptr, bytes, dtype, shape, error);
  if (index < 0)
    return false;
  commit(size_t(index), ptr);
  return true;
}

int64_t LayerBindings::check(const std::string &name, void *ptr, int64_t bytes, DType dtype,
                             const std::vector<int64_t> &shape, std::string &error) const {
  int64_t index = p_->findCallerTensor(*m_, name);
  if (index < 0) {
    const BundleTensor *other = nullptr;
    for (const BundleTensor &t : m_->tensors)
      if (t.name == name)
        other = &t;
    std::string names;
    for (const CallerTensor &ct : p_->callerTensors)
      names += " " + m_->tensor(ct.id)->name;
    error = other ? "tensor '" + name + "' is an intermediate (the runtime's arena holds "
                                        "it): only these are bound:" + names
                  : "no tensor '" + name + "' in this layer; the caller binds:" + names;
    return -1;
  }
  const CallerTensor &ct = p_->callerTensors[size_t(index)];
  const BundleTensor &t = *m_->tensor(ct.id);
  std::string what = "tensor '" + name + "' (" + tensorRoleName(t.role) + ")";
  if (!ptr) {
    error = what + ": null pointer";
    return -1;
  }
  if (dtype != t.dtype) {
    error = what + ": dtype " + dtypeName(dtype) + " given, the layer's is " +
            dtypeName(t.dtype);
    return -1;
  }
  if (shape != t.shape) {
    error = what + ": shape " + shapeString(shape) + " given, the layer's is " +
            shapeString(t.shape) + " (dims '" + t.dims + "', outermost first)";
    return -1;
  }
  if (bytes < t.bytes) {
    error = what + ": " + std::to_string(bytes) + " bytes given, it needs " +
            std::to_string(t.bytes);
    return -1;
  }
  uintptr_t start = reinterpret_cast<uintptr_t>(ptr) - uintptr_t(ct.byteOffset);
  if (reinterpret_cast<uintptr_t>(ptr) < uintptr_t(ct.byteOffset) ||
      start % uintptr_t(kBindAlignment) != 0) {
    error = what + ": pointer " + pointerString(ptr) + " is misaligned: the runtime needs " +
            std::to_string(kBindAlignment) + "-byte aligned buffers" +
            (ct.byteOffset ? " (this tensor starts " + std::to_string(ct.byteOffset) +
                                 " bytes into a buffer it shares, so its pointer must be " +
                                 std::to_string(ct.byteOffset % kBindAlignment) +
                                 " modulo " + std::to_string(kBindAlignment) + ")"
                           : std::string());
    return -1;
  }
  const CallerBuffer &b = p_->buffers[ct.buffer];
  for (size_t sibling : b.tensors) {
    if (sibling == size_t(index) || !ptr_[sibling])
      continue;
    const CallerTensor &st = p_->callerTensors[sibling];
    uintptr_t siblingStart = reinterpret_cast<uintptr_t>(ptr_[sibling]) - uintptr_t(st.byteOffset);
    if (siblingStart != start) {
      const BundleTensor &s = *m_->tensor(st.id);
      error = what + " shares one buffer with '" + s.name + "' (" + name + " at byte " +
              std::to_string(ct.byteOffset) + ", " + s.name + " at byte " +
              std::to_string(st.byteOffset) + "), but " + s.name + " is bound to " +
              pointerString(ptr_[sibling]) + ", so " + name + " must be at " +
              pointerString(reinterpret_cast<void *>(siblingStart + uintptr_t(ct.byteOffset))) +
              " (unbind " + s.name + " first to move the buffer)";
      return -1;
    }
  }
  return index;
}

void LayerBindings::commit(size_t index, void *ptr) {
  if (ptr_[index] != ptr)
    ++version_;
  ptr_[index] = ptr;
  recompute(p_->callerTensors[index].buffer);
}

bool LayerBindings::unbind(const std::string &name, std::string &error) {
  int64_t index = p_->findCallerTensor(*m_, name);
  if (index < 0) {
    error = "no caller tensor '" + name + "' in this layer";
    return false;
  }
  if (ptr_[size_t(index)])
    ++version_;
  ptr_[size_t(index)] = nullptr;
  recompute(p_->callerTensors[size_t(index)].buffer);
  return true;
}

void LayerBindings::unbindAll() {
  for (size_t i = 0; i < ptr_.size(); ++i)
    ptr_[i] = nullptr;
  for (size_t b = 0; b < start_.size(); ++b)
    start_[b] = nullptr;
  ++version_;
}

void LayerBindings::recompute(size_t buffer) {
  start_[buffer] = nullptr;
  for (size_t i : p_->buffers[buffer].tensors)
    if (ptr_[i])
      start_[buffer] = static_cast<char *>(ptr_[i]) - p_->callerTensors[i].byteOffset;
}

std::vector<std::string> LayerBindings::missingFor(Phase phase) const {
  std::vector<std::string> out;
  for (size_t b = 0; b < p_->buffers.size(); ++b)
    if (p_->buffers[b].usedBy[int(phase)])
      for (size_t i : p_->buffers[b].tensors)
        if (!ptr_[i])
          out.push_back(m_->tensor(p_->callerTensors[i].id)->name);
  return out;
}

} // namespace dmrt
