//===- ExchangeLayout.h - the data-parallel exchange's one device buffer --===//
//
// Data-parallel training on a device whose memory is not the host's
// (runtime/StepFeeds.h): grad_step writes its loss, metrics and gradients
// into one device buffer, which the ranks average in place with one
// collective (Device::allreduceMean), and apply_step reads the gradients
// there. This is that buffer's layout, in grad_step's results: the loss and
// metrics packed first (one copy takes them to a result slot), then each
// gradient on a 256-byte boundary (as an allocation of its own would be:
// what kernels and cuBLASLt expect), in entry order. StepFeeds lays the
// buffer out by it; a GPU's plan of its memory (runtime/cuda) counts it.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_EXCHANGELAYOUT_H
#define TFC_RUNTIME_EXCHANGELAYOUT_H

#include "runtime/Manifest.h"
#include "runtime/Tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace tfc::rt {

struct ExchangeLayout {
  /// Floats in all; the scores' (loss and metrics) at the start.
  size_t floats = 0, scores = 0;
  /// A result slot's copy of the scores, rounded as device memory is.
  size_t scoreSlotBytes = 0;
  /// Each result's feed key and offset in floats.
  std::vector<std::pair<std::string, size_t>> scoreAt, gradAt;
};

/// Gradients start every 64 floats (256 bytes); so does a slot's scores.
inline constexpr size_t kExchangeAlignFloats = 64;

/// `gradStep`'s layout; false with `error` set for a result that is not an
/// f32 loss, metric or gradient.
inline bool exchangeLayout(const EntrySpec &gradStep, ExchangeLayout &layout, std::string &error) {
  layout = ExchangeLayout();
  auto floatsOf = [](const TensorSpec &spec) {
    size_t n = 1;
    for (int64_t d : spec.shape)
      n *= size_t(d);
    return n;
  };
  auto aligned = [](size_t floats) {
    return (floats + kExchangeAlignFloats - 1) / kExchangeAlignFloats * kExchangeAlignFloats;
  };
  size_t at = 0;
  for (const TensorSpec &r : gradStep.results) {
    if (r.dtype != DType::F32) {
      error = "data-parallel step: grad_step's " + r.feedKey() + " is " + dtypeName(r.dtype) +
              ", and only f32 values are averaged";
      return false;
    }
    if (r.kind == abi::ValueKind::Loss || r.kind == abi::ValueKind::Metric) {
      layout.scoreAt.push_back({r.feedKey(), at});
      at += floatsOf(r);
    } else if (r.kind != abi::ValueKind::Grad) {
      error = "data-parallel step: grad_step returns " + r.feedKey() +
              ", which is neither a gradient, the loss nor a metric";
      return false;
    }
  }
  layout.scores = at;
  layout.scoreSlotBytes = aligned(at) * sizeof(float);
  for (const TensorSpec &r : gradStep.results)
    if (r.kind == abi::ValueKind::Grad) {
      at = aligned(at);
      layout.gradAt.push_back({r.feedKey(), at});
      at += floatsOf(r);
    }
  layout.floats = at;
  return true;
}

} // namespace tfc::rt

#endif // TFC_RUNTIME_EXCHANGELAYOUT_H
