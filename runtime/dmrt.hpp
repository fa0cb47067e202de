//===- dmrt.hpp - A thin C++ layer over the C API (runtime/dmrt.h) -*- C++ -*-===//
//
// dmrt::Layer owns a dmrt_layer (closed by its destructor, movable, not
// copyable). Methods mirror the C functions and return dmrt::Status, which
// holds the code and the message (dmrt_last_error at the failure); nothing
// throws. Header-only: link libdmrt (target dmrt-c).
//
//   dmrt::Layer layer;
//   if (dmrt::Status s = layer.open("bert.dmlib"); !s) { puts(s.message.c_str()); ... }
//   for (const dmrt_tensor_desc &t : layer.tensors()) layer.bind(t.name, bufferFor(t));
//   layer.setSeed(step, 0);
//   layer.forward(stream);  layer.backward(stream);
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_HPP
#define DMRT_HPP

#include "runtime/dmrt.h"

#include <string>
#include <utility>
#include <vector>

namespace dmrt {

struct Status {
  dmrt_status code = DMRT_OK;
  std::string message;
  explicit operator bool() const { return code == DMRT_OK; }
  static Status of(dmrt_status s) {
    return s == DMRT_OK ? Status{} : Status{s, dmrt_last_error()};
  }
};

class Layer {
public:
  Layer() = default;
  ~Layer() { dmrt_close(layer_); }
  Layer(Layer &&o) noexcept : layer_(std::exchange(o.layer_, nullptr)) {}
  Layer &operator=(Layer &&o) noexcept {
    if (this != &o) {
      dmrt_close(layer_);
      layer_ = std::exchange(o.layer_, nullptr);
    }
    return *this;
  }
  Layer(const Layer &) = delete;
  Layer &operator=(const Layer &) = delete;

  /// Opens `dir` (closing what was open); flags DMRT_OPEN_*.
  Status open(const std::string &dir, uint32_t flags = 0, int device = 0) {
    dmrt_close(layer_);
    layer_ = nullptr;
    dmrt_open_options o;
    dmrt_open_options_init(&o);
    o.flags = flags;
    o.device = device;
    return Status::of(dmrt_open(dir.c_str(), &o, &layer_));
  }
  /// Takes ownership of an open handle (closing what was open).
  void reset(dmrt_layer *owned) {
    dmrt_close(layer_);
    layer_ = owned;
  }
  bool isOpen() const { return layer_ != nullptr; }
  dmrt_layer *get() const { return layer_; }

  std::string model() const { return dmrt_model(layer_); }
  std::string deviceName() const { return dmrt_device_name(layer_); }
  /// Every tensor the caller binds (empty when not open).
  std::vector<dmrt_tensor_desc> tensors() const {
    std::vector<dmrt_tensor_desc> out;
    int32_t n = 0;
    if (dmrt_tensor_count(layer_, &n) != DMRT_OK)
      return out;
    for (int32_t i = 0; i < n; ++i) {
      dmrt_tensor_desc d;
      if (dmrt_tensor_info(layer_, i, &d) == DMRT_OK)
        out.push_back(d);
    }
    return out;
  }
  /// The description of tensor `name`.
  Status tensor(const std::string &name, dmrt_tensor_desc &out) const {
    int32_t i = 0;
    if (dmrt_status s = dmrt_find_tensor(layer_, name.c_str(), &i); s != DMRT_OK)
      return Status::of(s);
    return Status::of(dmrt_tensor_info(layer_, i, &out));
  }
  Status memory(dmrt_memory_info &out) const { return Status::of(dmrt_memory(layer_, &out)); }
  /// The arena a run of `mode` needs (dmrt_arena_bytes).
  Status arenaBytes(dmrt_mode mode, int64_t &out) const {
    return Status::of(dmrt_arena_bytes(layer_, mode, &out));
  }

  /// Binds with the caller's own description of the buffer (checked).
  Status bind(const std::string &name, void *ptr, int64_t bytes, dmrt_dtype dtype,
              const std::vector<int64_t> &shape) {
    return Status::of(dmrt_bind(layer_, name.c_str(), ptr, bytes, dtype,
                                int32_t(shape.size()), shape.data()));
  }
  /// Binds a buffer allocated as the layer describes the tensor (pointer
  /// checks only).
  Status bind(const std::string &name, void *ptr) {
    dmrt_tensor_desc d;
    if (Status s = tensor(name, d); !s)
      return s;
    return Status::of(dmrt_bind(layer_, name.c_str(), ptr, d.bytes, d.dtype, d.rank, d.shape));
  }
  Status unbind(const std::string &name) {
    return Status::of(dmrt_unbind(layer_, name.c_str()));
  }
  Status setArena(void *ptr, int64_t bytes) {
    return Status::of(dmrt_set_arena(layer_, ptr, bytes));
  }
  Status setSeed(uint64_t seed, uint64_t offset = 0) {
    return Status::of(dmrt_set_seed(layer_, seed, offset));
  }
  Status setGraphs(bool on) { return Status::of(dmrt_set_graphs(layer_, on ? 1 : 0)); }
  /// DMRT_GRAPHS_OFF, DMRT_GRAPHS_ON (steps ordered by the memory they
  /// share) or DMRT_GRAPHS_SERIAL (the bundle's order).
  Status setGraphMode(int mode) { return Status::of(dmrt_set_graphs(layer_, mode)); }
  Status forward(dmrt_stream stream, dmrt_mode mode = DMRT_MODE_TRAIN) {
    return Status::of(dmrt_forward(layer_, stream, mode));
  }
  Status backward(dmrt_stream stream) { return Status::of(dmrt_backward(layer_, stream)); }

private:
  dmrt_layer *layer_ = nullptr;
};

} // namespace dmrt

#endif // DMRT_HPP
