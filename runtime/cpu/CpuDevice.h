//===- CpuDevice.h - the CPU as a device: host memory, entries in place ---===//

#ifndef TFC_RUNTIME_CPU_CPUDEVICE_H
#define TFC_RUNTIME_CPU_CPUDEVICE_H

#include "runtime/Device.h"

namespace tfc::rt {

/// Memory for an entry's arena, for std::free: 64-byte aligned, and from
/// 2 MiB up on 2 MiB boundaries with transparent huge pages asked for
/// (madvise; Debian's default THP mode is "madvise", not "always"). A train
/// step sweeps tens of MiB of arena; on 4 KiB pages that is a TLB entry
/// for every 4 KiB (the Fleuret CNN's and set anomaly's steps 0.5-1% faster
/// on 2 MiB pages, Zen 4).
void *allocateArena(size_t bytes);

/// The CPU device: its memory is the host's (allocate is allocateArena), an
/// entry runs on the calling thread (and the thread pool) in the float mode
/// asked for (FloatMode.h). With TFC_DEVICE=cpu-copied in the environment,
/// the same CPU as if its memory were not the host's: arguments and results
/// copied in and out around every call, as a GPU's are (tests use it to
/// check the runtime's side of runtime/Device.h without a GPU).
std::unique_ptr<Device> createCpuDevice();

} // namespace tfc::rt

#endif // TFC_RUNTIME_CPU_CPUDEVICE_H
