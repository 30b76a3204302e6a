//===- FloatMode.h - how generated code treats subnormal floats -----------===//
//
// Compiled models run with subnormal (denormal) floats flushed to zero, both
// as results (FTZ) and as operands (DAZ), as TensorFlow, oneDNN and XLA's
// CPU backends do. An x86 core takes a microcode assist on every subnormal
// operand or result, about a hundred times slower than the instruction, and
// the gradients of a training run drift into that range: the Fleuret
// attention model's softmax gradients do after about 20 steps, and its train
// step then slows from 27 ms to over 60 ms for hundreds of steps. Flushing
// changes a value only where it is below 1.2e-38 in magnitude.
//
// The mode is per thread: Model::run sets it around an entry, and the
// thread pool's workers take the caller's mode with every job, so a parallel
// loop computes exactly what the same loop on one thread would.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_FLOATMODE_H
#define TFC_RUNTIME_FLOATMODE_H

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace tfc::rt {

/// The calling thread's floating-point control word (MXCSR on x86; 0
/// elsewhere, where the mode is left as the platform sets it).
inline unsigned floatControl() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#else
  return 0;
#endif
}

inline void setFloatControl(unsigned control) {
#if defined(__x86_64__) || defined(__i386__)
  if (_mm_getcsr() != control)
    _mm_setcsr(control);
#else
  (void)control;
#endif
}

/// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
constexpr unsigned kFlushDenormals = 0x8040;

/// Flushes subnormals on this thread while in scope (or, with `flush`
/// false, makes sure they are kept); restores the caller's mode after.
class ScopedFloatMode {
public:
  explicit ScopedFloatMode(bool flush) : saved_(floatControl()) {
    setFloatControl(flush ? saved_ | kFlushDenormals : saved_ & ~kFlushDenormals);
  }
  ~ScopedFloatMode() { setFloatControl(saved_); }
  ScopedFloatMode(const ScopedFloatMode &) = delete;
  ScopedFloatMode &operator=(const ScopedFloatMode &) = delete;

private:
  unsigned saved_;
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_FLOATMODE_H
