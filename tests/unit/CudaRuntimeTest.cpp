//===- CudaRuntimeTest.cpp - tfc_cuda_launch and tfc_cuda_sgemm on fakes --===//
//
// The CUDA device as generated code drives it, against the fake driver
// (FakeCudaDriver.cpp: PTX modules, launches checked as a GPU would, graphs)
// and the fake cuBLASLt (FakeCublasLt.cpp: naive GEMMs on the fake's
// memory): kernels loaded from a PTX image of two kernels, launches from an
// entry, the first call eager, the second captured, the third a replay; GEMMs
// with transposes, strided batches, batch reductions and accumulation against
// a naive row-major reference; and every error path (no driver, an unknown
// kernel, a bad grid or block, a pointer outside device memory, no cuBLASLt).
//
//===----------------------------------------------------------------------===//

#include "tests/unit/ScopedEnv.h"
#include "runtime/Abi.h"
#include "runtime/Manifest.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/RuntimeFunctions.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tfc::rt;
using namespace tfc::rt::cuda;

namespace {

using tfc::test::ScopedEnv;

/// Two kernels as MLIR's NVPTX backend writes them: pointers and an index as
/// .u64, a 32-bit size, a float.
const char kPtx[] = R"(//
.version 8.0
.target sm_90
.address_size 64

.visible .entry tfc_kernel_scale(
	.param .u64 .ptr .global .align 4 tfc_kernel_scale_param_0,
	.param .u64 .ptr .global .align 4 tfc_kernel_scale_param_1,
	.param .u32 tfc_kernel_scale_param_2
)
{
	ret;
}

.visible .entry tfc_kernel_fill(
	.param .u64 tfc_kernel_fill_param_0,
	.param .u64 tfc_kernel_fill_param_1,
	.param .f32 tfc_kernel_fill_param_2
)
{
	ret;
}
)";

/// The fake driver's log and reset, through the library the device loaded.
struct FakeLog {
  FakeLog() {
    handle = dlopen(TFC_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
    if (handle) {
      log = reinterpret_cast<const char *(*)()>(dlsym(handle, "tfcFakeCudaLog"));
      reset = reinterpret_cast<void (*)()>(dlsym(handle, "tfcFakeCudaReset"));
    }
  }
  ~FakeLog() {
    if (handle)
      dlclose(handle);
  }
  std::string text() const { return log ? log() : ""; }
  void *handle = nullptr;
  const char *(*log)() = nullptr;
  void (*reset)() = nullptr;
};

/// A device on the fakes with kPtx's kernels, and the log cleared.
class CudaRuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string error;
    device = CudaDevice::openIndex(0, error);
    ASSERT_TRUE(device) << error;
    ASSERT_TRUE(device->loadKernels(kPtx, {"tfc_kernel_scale", "tfc_kernel_fill"}, error))
        << error;
    ASSERT_TRUE(device->loadCublasLt(error)) << error;
    fake = std::make_unique<FakeLog>(); // the library is loaded now
    ASSERT_TRUE(fake->log && fake->reset);
    fakeLogStart = fake->text().size();
  }
  /// The log since SetUp (the fake's log spans the process).
  std::string log() const { return fake->text().substr(fakeLogStart); }
  /// How often `what` occurs in log().
  size_t count(const std::string &what) const {
    std::string all = log();
    size_t n = 0;
    for (size_t at = all.find(what); at != std::string::npos; at = all.find(what, at + 1))
      ++n;
    return n;
  }

  ScopedEnv driver{"TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER};
  ScopedEnv cublas{"TFC_CUBLASLT", TFC_FAKE_CUBLASLT};
  std::unique_ptr<CudaDevice> device;
  std::unique_ptr<FakeLog> fake;
  size_t fakeLogStart = 0;
};

// What the entries below launch: set by each test.
intptr_t gSlots[3];
int64_t gGrid[3] = {1, 1, 1}, gBlock[3] = {1, 1, 1};
intptr_t gKernel = 0;

/// An entry as generated code is: two launches, buffers[0] and [1] as
/// pointers, an integer, and a float's bits in a slot's low bytes.
void twoLaunches(void **buffers) {
  intptr_t scale[3] = {intptr_t(buffers[0]), intptr_t(buffers[1]), 1024};
  tfc_cuda_launch(0, 4, 1, 1, 256, 1, 1, 0, 3, intptr_t(scale));
  float value = 0.5f;
  intptr_t fill[3] = {intptr_t(buffers[1]), 7, 0};
  std::memcpy(&fill[2], &value, sizeof value);
  tfc_cuda_launch(1, 2, 3, 1, 32, 4, 1, 0, 3, intptr_t(fill));
}

/// One launch of gKernel with gGrid, gBlock and gSlots, then kernel 1.
void configuredLaunch(void **) {
  tfc_cuda_launch(gKernel, gGrid[0], gGrid[1], gGrid[2], gBlock[0], gBlock[1], gBlock[2], 0, 3,
                  intptr_t(gSlots));
  intptr_t fill[3] = {gSlots[1], 0, 0};
  tfc_cuda_launch(1, 1, 1, 1, 1, 1, 1, 0, 3, intptr_t(fill));
}

} // namespace

TEST_F(CudaRuntimeTest, LaunchesThenGraphCaptureThenReplay) {
  void *x = device->allocate(4096), *y = device->allocate(4096);
  ASSERT_TRUE(x && y);
  void *buffers[] = {x, y};
  std::string error;
  // First call eager, second captured and launched, third replayed.
  for (int call = 0; call < 3; ++call)
    ASSERT_TRUE(device->run(twoLaunches, buffers, 2, error)) << "call " << call << ": " << error;
  EXPECT_EQ(device->graphsCaptured(), 1u);
  const std::string scale = "cuLaunchKernel(tfc_kernel_scale, grid 4x1x1, block 256x1x1, smem 0)";
  const std::string fill = "cuLaunchKernel(tfc_kernel_fill, grid 2x3x1, block 32x4x1, smem 0)";
  const std::string current = "cuCtxSetCurrent(0xc0)\n";
  EXPECT_EQ(log(), current + "cuMemAlloc(4096)\n" + current + "cuMemAlloc(4096)\n" + current +
                       scale + "\n" + fill + "\ncuStreamSynchronize\n" + current +
                       "cuStreamBeginCapture(mode 1)\n" + scale + " captured\n" + fill +
                       " captured\ncuStreamEndCapture(2 nodes)\ncuGraphInstantiate\n"
                       "cuGraphLaunch(2 nodes)\ncuStreamSynchronize\n" +
                       current + "cuGraphLaunch(2 nodes)\ncuStreamSynchronize\n");
  device->release(x);
  device->release(y);
}

TEST_F(CudaRuntimeTest, NoGraphLaunchesEagerly) {
  device->configure({0, /*graphs=*/false});
  void *x = device->allocate(64), *y = device->allocate(64);
  void *buffers[] = {x, y};
  std::string error;
  for (int call = 0; call < 3; ++call)
    ASSERT_TRUE(device->run(twoLaunches, buffers, 2, error)) << error;
  EXPECT_EQ(device->graphsCaptured(), 0u);
  EXPECT_EQ(count("cuLaunchKernel(tfc_kernel_scale"), 3u) << log();
  EXPECT_EQ(count("cuStreamBeginCapture"), 0u) << log();
  device->release(x);
  device->release(y);
}

TEST_F(CudaRuntimeTest, NewBuffersAreCapturedAgain) {
  void *a = device->allocate(64), *b = device->allocate(64), *c = device->allocate(64);
  void *first[] = {a, b}, *second[] = {c, b};
  std::string error;
  ASSERT_TRUE(device->run(twoLaunches, first, 2, error)) << error;
  ASSERT_TRUE(device->run(twoLaunches, first, 2, error)) << error;
  // The graph holds a's address: with c in its place, eager again, then a
  // new graph.
  ASSERT_TRUE(device->run(twoLaunches, second, 2, error)) << error;
  ASSERT_TRUE(device->run(twoLaunches, second, 2, error)) << error;
  EXPECT_EQ(device->graphsCaptured(), 2u);
  // a is freed: a replay of the first graph would now be refused by the fake.
  device->release(a);
  ASSERT_TRUE(device->run(twoLaunches, second, 2, error)) << error;
  device->release(b);
  device->release(c);
}

TEST_F(CudaRuntimeTest, BadGridBlockOrKernelNamesTheKernel) {
  void *x = device->allocate(64), *y = device->allocate(64);
  gSlots[0] = intptr_t(x), gSlots[1] = intptr_t(y), gSlots[2] = 16;
  std::string error;
  struct Case {
    intptr_t kernel;
    int64_t grid[3], block[3];
    std::string message;
  };
  const Case cases[] = {
      {0, {0, 1, 1}, {32, 1, 1},
       "tfc_cuda_launch of kernel 'tfc_kernel_scale' (grid 0x1x1, block 32x1x1): the grid must "
       "be at least 1 in each dimension, at most 2147483647 in x and 65535 in y and z"},
      {0, {1, 70000, 1}, {32, 1, 1},
       "tfc_cuda_launch of kernel 'tfc_kernel_scale' (grid 1x70000x1, block 32x1x1): the grid "
       "must be at least 1 in each dimension, at most 2147483647 in x and 65535 in y and z"},
      {1, {1, 1, 1}, {64, 32, 1},
       "tfc_cuda_launch of kernel 'tfc_kernel_fill' (grid 1x1x1, block 64x32x1): a block must "
       "have 1 to 1024 threads (z at most 64)"},
      {1, {1, 1, 1}, {0, 1, 1},
       "tfc_cuda_launch of kernel 'tfc_kernel_fill' (grid 1x1x1, block 0x1x1): a block must "
       "have 1 to 1024 threads (z at most 64)"},
      {2, {1, 1, 1}, {1, 1, 1}, "tfc_cuda_launch: kernel 2 does not exist (the model has 2 kernels)"},
      {-1, {1, 1, 1}, {1, 1, 1},
       "tfc_cuda_launch: kernel -1 does not exist (the model has 2 kernels)"},
  };
  for (const Case &c : cases) {
    gKernel = c.kernel;
    std::copy(c.grid, c.grid + 3, gGrid);
    std::copy(c.block, c.block + 3, gBlock);
    size_t launches = count("cuLaunchKernel(");
    void *buffers[] = {x, y};
    EXPECT_FALSE(device->run(configuredLaunch, buffers, 2, error));
    EXPECT_EQ(error, c.message);
    // Refused before the driver, and the launch after it skipped.
    EXPECT_EQ(count("cuLaunchKernel("), launches) << log();
  }
  // The device is usable after an error: the next run starts clean.
  gKernel = 0, gGrid[0] = 1, gBlock[0] = 1;
  void *buffers[] = {x, y};
  EXPECT_TRUE(device->run(configuredLaunch, buffers, 2, error)) << error;
  device->release(x);
  device->release(y);
}

/// A persistent kernel's launch: kernel 0 on gGrid x gBlock, cooperatively.
void cooperativeLaunch(void **) {
  tfc_cuda_launch_cooperative(0, gGrid[0], gGrid[1], gGrid[2], gBlock[0], gBlock[1], gBlock[2],
                              0, 3, intptr_t(gSlots));
}

// tfc_cuda_launch_cooperative (--persistent-kernels): cuLaunchKernelEx with the
// cooperative attribute and as many blocks as the GPU holds at once, at most
// the grid asked for (the fake: 132 multiprocessors of 2048 threads, or
// TFC_FAKE_CUDA_OCCUPANCY blocks each), the occupancy asked once a kernel;
// captured and replayed like any launch. A grid of more than one row, or a
// kernel no block of which fits, is refused by name before the launch.
TEST_F(CudaRuntimeTest, CooperativeLaunchTakesTheBlocksTheGpuHolds) {
  void *x = device->allocate(4096), *y = device->allocate(4096);
  void *buffers[] = {x, y};
  gSlots[0] = intptr_t(x), gSlots[1] = intptr_t(y), gSlots[2] = 16;
  std::string error;
  gGrid[0] = 2000, gGrid[1] = gGrid[2] = 1;
  gBlock[0] = 256, gBlock[1] = gBlock[2] = 1;
  for (int call = 0; call < 3; ++call)
    ASSERT_TRUE(device->run(cooperativeLaunch, buffers, 2, error)) << error;
  // 8 blocks of 256 threads a multiprocessor, 132 of them: 1,056 of the 2,000.
  const std::string launch = "cuLaunchKernelEx(tfc_kernel_scale, grid 1056x1x1, block 256x1x1, "
                             "smem 0, cooperative)";
  EXPECT_EQ(count(launch + "\n"), 1u) << log();
  EXPECT_EQ(count(launch + " captured\n"), 1u) << log();
  EXPECT_EQ(count("cuGraphLaunch(1 nodes)"), 2u) << log();
  EXPECT_EQ(count("cuOccupancyMaxActiveBlocksPerMultiprocessor(tfc_kernel_scale, 256, 0): 8"),
            1u)
      << log();

  // A grid the GPU holds whole is launched as asked (eagerly: no graph of
  // the first grid replayed).
  device->configure({0, /*graphs=*/false});
  gGrid[0] = 300;
  ASSERT_TRUE(device->run(cooperativeLaunch, buffers, 2, error)) << error;
  EXPECT_EQ(count("cuLaunchKernelEx(tfc_kernel_scale, grid 300x1x1"), 1u) << log();

  gGrid[1] = 2;
  EXPECT_FALSE(device->run(cooperativeLaunch, buffers, 2, error));
  EXPECT_EQ(error, "tfc_cuda_launch_cooperative of kernel 'tfc_kernel_scale' (grid 300x2x1, "
                   "block 256x1x1): a persistent kernel's grid is one row of blocks");
  device->release(x);
  device->release(y);
}

TEST_F(CudaRuntimeTest, CooperativeKernelThatDoesNotFitIsRefused) {
  ScopedEnv none{"TFC_FAKE_CUDA_OCCUPANCY", "0"};
  void *x = device->allocate(64), *y = device->allocate(64);
  void *buffers[] = {x, y};
  gSlots[0] = intptr_t(x), gSlots[1] = intptr_t(y), gSlots[2] = 16;
  gGrid[0] = 264, gGrid[1] = gGrid[2] = 1;
  gBlock[0] = 256, gBlock[1] = gBlock[2] = 1;
  std::string error;
  EXPECT_FALSE(device->run(cooperativeLaunch, buffers, 2, error));
  EXPECT_EQ(error, "the persistent kernel 'tfc_kernel_scale' (grid 264x1x1, block 256x1x1) "
                   "cannot run on this GPU: not one block of 256 threads fits on a "
                   "multiprocessor (its registers or shared memory); compile the model without "
                   "--persistent-kernels");
  EXPECT_EQ(count("cuLaunchKernelEx("), 0u) << log();
  device->release(x);
  device->release(y);
}

TEST_F(CudaRuntimeTest, PointerOutsideDeviceMemoryIsRefused) {
  void *x = device->allocate(64), *y = device->allocate(64);
  std::vector<float> host(16);
  // A host address where a device pointer belongs: the fake refuses it as a
  // GPU would fault on it.
  gKernel = 0, gGrid[0] = 1, gBlock[0] = 1;
  gSlots[0] = intptr_t(host.data()), gSlots[1] = intptr_t(y), gSlots[2] = 16;
  void *buffers[] = {x, y};
  std::string error;
  EXPECT_FALSE(device->run(configuredLaunch, buffers, 2, error));
  EXPECT_EQ(error, "cuLaunchKernel(kernel 'tfc_kernel_scale' (grid 1x1x1, block 1x1x1)): "
                   "CUDA_ERROR_INVALID_VALUE: invalid argument");
  EXPECT_NE(log().find("INVALID: param 0"), std::string::npos) << log();
  // The integer param (16) and the 32-bit size are not pointers.
  gSlots[0] = intptr_t(x);
  EXPECT_TRUE(device->run(configuredLaunch, buffers, 2, error)) << error;
  // Nor is a 64-bit integer past 4 GiB far from any allocation (a dropout
  // key: tfc-kernel-check's were refused), in tfc_kernel_fill's .u64 param 1;
  // a freed allocation's address there is refused.
  gKernel = 1;
  gSlots[0] = intptr_t(y), gSlots[1] = intptr_t(0x500000009LL), gSlots[2] = 0;
  EXPECT_TRUE(device->run(configuredLaunch, buffers, 2, error)) << error;
  void *freed = device->allocate(64);
  device->release(freed);
  gSlots[1] = intptr_t(freed);
  void *others[] = {y, x}; // another buffer set: launched, not the graph replayed
  EXPECT_FALSE(device->run(configuredLaunch, others, 2, error));
  EXPECT_NE(log().find("INVALID: param 1"), std::string::npos) << log();
  gKernel = 0;
  device->release(x);
  device->release(y);
}

// CudaDevice::gatherBatch launches gather.cu's kernels on the stream: a
// gather an input, a word a thread (so the grid follows the rows'
// alignment), its indices order[*first ..) with *first in device memory,
// then one advance of *first. The fake runs both kernels on the host (and
// refuses a row outside the rows' allocation), so the launches' parameters
// are checked by the bytes gathered: against a gather on the host, for rows
// of 16-byte, 4-byte and 1-byte words.
TEST_F(CudaRuntimeTest, GatherBatchLaunchesTheGatherKernels) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  EXPECT_FALSE(device->canGatherRows()); // not loaded: openIndex loads no kernels
  device->loadLayerKernels();
  ASSERT_TRUE(device->canGatherRows());
  const int64_t samples = 50, n = 9, start = 2;
  for (size_t rowBytes : {size_t(64), size_t(12), size_t(7)}) {
    SCOPED_TRACE(rowBytes);
    std::vector<unsigned char> rows(samples * rowBytes);
    for (size_t i = 0; i < rows.size(); ++i)
      rows[i] = static_cast<unsigned char>(i * 7 + rowBytes);
    // The batch is the order's rows [start, start + n); the rows around
    // them are out of range.
    std::vector<int64_t> order = {999, 999, 3, 49, 0, 3, 17, 48, 1, 25, 3, 999};
    std::vector<unsigned char> want(n * rowBytes);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(want.data() + i * rowBytes, rows.data() + order[start + i] * rowBytes,
                  rowBytes);
    void *deviceRows = device->allocate(rows.size()),
         *deviceOrder = device->allocate(order.size() * 8), *first = device->allocate(8),
         *to = device->allocate(want.size());
    device->copyIn(deviceRows, rows.data(), rows.size());
    device->copyIn(deviceOrder, order.data(), order.size() * sizeof(int64_t));
    device->copyIn(first, &start, sizeof start);
    size_t launches = count("cuLaunchKernel(tfc_cuda_gather_rows_kernel,");
    BatchGather batch;
    batch.inputs.push_back({to, deviceRows, rowBytes, static_cast<const int64_t *>(deviceOrder),
                            size_t(n)});
    batch.first = static_cast<int64_t *>(first);
    batch.advance = 5;
    std::string error;
    ASSERT_TRUE(device->gatherBatch(batch, error)) << error;
    std::vector<unsigned char> got(want.size());
    device->copyOut(got.data(), to, got.size());
    int64_t advanced = 0;
    device->copyOut(&advanced, first, sizeof advanced);
    ASSERT_TRUE(device->takeError(error)) << error;
    EXPECT_EQ(got, want);
    EXPECT_EQ(advanced, start + 5);
    // One gather launch, of 256 threads a block, its grid a word a thread;
    // one advance, of one warp.
    EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_gather_rows_kernel,"), launches + 1) << log();
    const uintptr_t aligned = uintptr_t(to) | uintptr_t(deviceRows) | rowBytes;
    const size_t word = aligned % 16 == 0 ? 16 : aligned % 4 == 0 ? 4 : 1;
    const size_t grid = (n * (rowBytes / word) + 255) / 256;
    EXPECT_NE(log().find("cuLaunchKernel(tfc_cuda_gather_rows_kernel, grid " +
                         std::to_string(grid) + "x1x1, block 256x1x1, smem 0)\n"
                         "cuLaunchKernel(tfc_cuda_advance_first_kernel, grid 1x1x1, "
                         "block 32x1x1, smem 0)"),
              std::string::npos)
        << log();
    device->release(deviceRows);
    device->release(deviceOrder);
    device->release(first);
    device->release(to);
  }
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();

  // An index past the rows: the fake refuses it as a GPU would fault, and
  // gatherBatch reports it, naming the kernel.
  void *deviceRows = device->allocate(4 * 64), *deviceOrder = device->allocate(8),
       *first = device->allocate(8), *to = device->allocate(64);
  const int64_t past = 1000, zero = 0;
  device->copyIn(deviceOrder, &past, sizeof past);
  device->copyIn(first, &zero, sizeof zero);
  BatchGather batch;
  batch.inputs.push_back({to, deviceRows, 64, static_cast<const int64_t *>(deviceOrder), 1});
  batch.first = static_cast<int64_t *>(first);
  batch.advance = 1;
  std::string error;
  EXPECT_FALSE(device->gatherBatch(batch, error));
  EXPECT_NE(error.find("tfc_cuda_gather_rows_kernel"), std::string::npos) << error;
  EXPECT_NE(log().find("INVALID: gather: row 1000"), std::string::npos) << log();
  device->release(deviceRows);
  device->release(deviceOrder);
  device->release(first);
  device->release(to);
}

namespace {
void noLaunches(void **) {}
} // namespace

// A call's batch is gathered as part of it: eagerly at the entry's first
// call, captured with the entry at its second (the gathers and the advance
// are graph nodes), and replayed by its graph after that, each call reading
// the order's next rows because the advance moved *first on the device. The
// host launches nothing but the graph a replay.
TEST_F(CudaRuntimeTest, ABatchIsGatheredInTheEntrysGraph) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  device->loadLayerKernels();
  const size_t rowBytes = 32;
  const int64_t samples = 20, n = 4, calls = 4;
  std::vector<unsigned char> rows(samples * rowBytes);
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i] = static_cast<unsigned char>(i * 13 + 1);
  std::vector<int64_t> order(size_t(n * calls + 1)); // `b` reads one row further
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = int64_t((i * 7 + 3) % size_t(samples));
  void *deviceRows = device->allocate(rows.size()), *deviceOrder = device->allocate(order.size() * 8),
       *first = device->allocate(8), *a = device->allocate(n * rowBytes),
       *b = device->allocate(n * rowBytes / 2);
  device->copyIn(deviceRows, rows.data(), rows.size());
  device->copyIn(deviceOrder, order.data(), order.size() * sizeof(int64_t));
  const int64_t zero = 0;
  device->copyIn(first, &zero, sizeof zero);
  // Two inputs: whole rows into `a`, half rows (the same rows read as twice
  // as many of half the size, from the order's other half) into `b`.
  BatchGather batch;
  batch.inputs.push_back({a, deviceRows, rowBytes, static_cast<const int64_t *>(deviceOrder),
                          size_t(n)});
  batch.inputs.push_back({b, deviceRows, rowBytes / 2,
                          static_cast<const int64_t *>(deviceOrder) + 1, size_t(n)});
  batch.first = static_cast<int64_t *>(first);
  batch.advance = n;
  void *buffers[] = {a, b};
  std::string error;
  for (int64_t call = 0; call < calls; ++call) {
    SCOPED_TRACE(call);
    const size_t graphLaunches = count("cuGraphLaunch("), eager = count("cuLaunchKernel(");
    ASSERT_TRUE(device->run(noLaunches, buffers, 2, error, &batch)) << error;
    std::vector<unsigned char> gotA(n * rowBytes), gotB(n * rowBytes / 2);
    device->copyOut(gotA.data(), a, gotA.size());
    device->copyOut(gotB.data(), b, gotB.size());
    ASSERT_TRUE(device->takeError(error)) << error;
    std::vector<unsigned char> wantA(gotA.size()), wantB(gotB.size());
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(wantA.data() + i * rowBytes, rows.data() + order[call * n + i] * rowBytes,
                  rowBytes);
      std::memcpy(wantB.data() + i * rowBytes / 2,
                  rows.data() + order[call * n + 1 + i] * rowBytes / 2, rowBytes / 2);
    }
    EXPECT_EQ(gotA, wantA);
    EXPECT_EQ(gotB, wantB);
    // Captured, then replayed: one graph of 3 nodes; a replay launches
    // nothing else.
    if (call >= 1)
      EXPECT_EQ(count("cuGraphLaunch(3 nodes)"), graphLaunches + 1) << log();
    if (call >= 2)
      EXPECT_EQ(count("cuLaunchKernel("), eager) << log();
  }
  EXPECT_EQ(device->graphsCaptured(), 1u);
  EXPECT_NE(log().find("cuStreamBeginCapture(mode 1)\n"
                       "cuLaunchKernel(tfc_cuda_gather_rows_kernel, grid 1x1x1, block 256x1x1, "
                       "smem 0) captured\n"
                       "cuLaunchKernel(tfc_cuda_gather_rows_kernel, grid 1x1x1, block 256x1x1, "
                       "smem 0) captured\n"
                       "cuLaunchKernel(tfc_cuda_advance_first_kernel, grid 1x1x1, block 32x1x1, "
                       "smem 0) captured\ncuStreamEndCapture(3 nodes)"),
            std::string::npos)
      << log();
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();
  for (void *p : {deviceRows, deviceOrder, first, a, b})
    device->release(p);
}

namespace {
int64_t gNormRows = 0, gNormD = 0;
/// tfc_cuda_layer_norm_backward of gNormRows rows of gNormD in blocks of
/// 64 rows: x, gamma, g, dx, dgamma, dbeta and scratch are buffers 0-6.
void layerNormBackward(void **b) {
  tfc_cuda_layer_norm_backward(gNormRows, gNormD, 64, 1e-5f, intptr_t(b[0]), intptr_t(b[1]),
                               intptr_t(b[2]), 0, intptr_t(b[3]), intptr_t(b[4]), intptr_t(b[5]),
                               intptr_t(b[6]), 0, 0, 0, 0, 0, 0, 0, 1.0f, 0);
}
} // namespace

// The layer norm backward is one launch, a block a row block (the last to
// finish adds the blocks' partials, counting them on the device's counter,
// zeroed when the kernels load), while its partials are at most
// kLayerNormLastBlockPartials floats: the medium encoder's 8,192 rows of
// 512 (128 row blocks, 2^17 floats) and no rows at all; a row block more,
// and the reduce kernel adds them in a second launch, a block 32 columns.
// The fake runs neither (SimtKernelsTest does), but refuses a pointer, the
// counter's included, outside every allocation.
TEST_F(CudaRuntimeTest, LayerNormBackwardIsOneLaunchUnlessThePartialsAreMany) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  device->configure({0, /*graphs=*/false});
  device->loadLayerKernels();
  ASSERT_NE(device->lastBlockCounter(), 0u);
  unsigned counter = 1;
  device->copyOut(&counter, reinterpret_cast<void *>(uintptr_t(device->lastBlockCounter())),
                  sizeof counter);
  EXPECT_EQ(counter, 0u);
  ASSERT_EQ(2 * 128 * 512, tfc::rt::cuda::kernels::kLayerNormLastBlockPartials);
  // The fake reads none of them: a few bytes each will do.
  std::vector<void *> buffers(7);
  for (void *&buffer : buffers)
    buffer = device->allocate(256);
  const std::string backward = "cuLaunchKernel(tfc_cuda_layer_norm_backward_kernel, grid ",
                    reduce = "cuLaunchKernel(tfc_cuda_layer_norm_backward_reduce_kernel, grid ";
  struct Case {
    int64_t rows, d;
    const char *grid, *reduceGrid; // reduceGrid null: one launch
  };
  for (const Case &c :
       {Case{8192, 512, "128x1x1", nullptr}, Case{8193, 512, "129x1x1", "16x1x1"},
        Case{0, 512, "1x1x1", nullptr}, Case{64 * 2000, 100, "2000x1x1", "4x1x1"}}) {
    SCOPED_TRACE(c.rows);
    gNormRows = c.rows;
    gNormD = c.d;
    const size_t launches = count(backward), reduces = count(reduce);
    std::string error;
    ASSERT_TRUE(device->run(layerNormBackward, buffers.data(), buffers.size(), error)) << error;
    EXPECT_EQ(count(backward), launches + 1) << log();
    EXPECT_EQ(count(backward + c.grid + ", block 256x1x1"), 1u) << log();
    EXPECT_EQ(count(reduce), reduces + (c.reduceGrid ? 1 : 0)) << log();
    if (c.reduceGrid) {
      EXPECT_EQ(count(reduce + c.reduceGrid + ", block 256x1x1"), 1u) << log();
    }
  }
  // TFC_LAYER_NORM_ONE_LAUNCH=0's setting: few partials take two launches too.
  device->setLayerNormOneLaunch(false);
  gNormRows = 8192;
  gNormD = 512;
  const std::string slices = reduce + "16x1x1, block 256x1x1";
  const size_t reduces = count(reduce), sliced = count(slices);
  std::string error;
  ASSERT_TRUE(device->run(layerNormBackward, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count(reduce), reduces + 1) << log();
  EXPECT_EQ(count(slices), sliced + 1) << log();
  device->setLayerNormOneLaunch(true);
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();
  for (void *buffer : buffers)
    device->release(buffer);
}

namespace {
int64_t gLossRows = 0;
/// tfc_cuda_cross_entropy, then tfc_cuda_cross_entropy_fused, of gLossRows
/// rows of 10 classes: logits, labels, dloss, losses, out and dlogits are
/// buffers 0-5.
void crossEntropies(void **b) {
  tfc_cuda_cross_entropy(gLossRows, 10, 1, float(gLossRows), intptr_t(b[0]), intptr_t(b[1]),
                         intptr_t(b[3]), intptr_t(b[4]));
  tfc_cuda_cross_entropy_fused(gLossRows, 10, 1, float(gLossRows), intptr_t(b[0]), intptr_t(b[1]),
                               intptr_t(b[2]), intptr_t(b[3]), intptr_t(b[4]), intptr_t(b[5]), 0, 0,
                               0);
}
} // namespace

// The cross-entropy's forward and fused kernels are one launch each, a warp
// a row: the last block to finish adds the losses (on the layer norm
// backward's counter, a device's one last-block counter), and no mean
// kernel runs; TFC_CROSS_ENTROPY_ONE_LAUNCH=0's setting launches the mean
// kernel (one block) after each. The fake runs none of them
// (SimtKernelsTest does: the same bits either way).
TEST_F(CudaRuntimeTest, CrossEntropyIsOneLaunch) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  device->configure({0, /*graphs=*/false});
  device->loadLayerKernels();
  ASSERT_NE(device->lastBlockCounter(), 0u);
  EXPECT_TRUE(device->crossEntropyOneLaunch()); // the default
  std::vector<void *> buffers(6);
  for (void *&buffer : buffers)
    buffer = device->allocate(256);
  const std::string forward = "cuLaunchKernel(tfc_cuda_cross_entropy_forward_kernel, grid ",
                    fused = "cuLaunchKernel(tfc_cuda_cross_entropy_fused_kernel, grid ",
                    mean = "cuLaunchKernel(tfc_cuda_cross_entropy_mean_kernel, grid ";
  gLossRows = 8192; // the medium encoder's train step: 1,024 blocks
  std::string error;
  ASSERT_TRUE(device->run(crossEntropies, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count(forward + "1024x1x1, block 256x1x1"), 1u) << log();
  EXPECT_EQ(count(fused + "1024x1x1, block 256x1x1"), 1u) << log();
  EXPECT_EQ(count(mean), 0u) << log();

  device->setCrossEntropyOneLaunch(false);
  ASSERT_TRUE(device->run(crossEntropies, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count(forward), 2u) << log();
  EXPECT_EQ(count(fused), 2u) << log();
  EXPECT_EQ(count(mean + "1x1x1, block 256x1x1"), 2u) << log();
  // In order: each kernel, then the mean of its losses.
  const std::string all = log();
  const size_t second = all.find(forward, all.find(forward) + 1);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(all.find(mean, second), all.find(fused, all.find(fused) + 1)) << all;
  device->setCrossEntropyOneLaunch(true);
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();
  for (void *buffer : buffers)
    device->release(buffer);
}

namespace {
intptr_t gGradsBf16 = 0, gInputsBf16 = 0;
/// One head's attention backward (64 queries and keys, d = dv = 64, rows
/// of 64 floats), with the forward's out and statistics, no room for dS,
/// gGradsBf16 and gInputsBf16: buffers q, k, v, dO, dq, dk, dv, out, stats.
void attentionBackward(void **b) {
  auto p = [&](int i) { return intptr_t(b[i]); };
  tfc_cuda_attention_backward(1, 1, 64, 64, 64, 64, 0.125f, p(0), 0, 0, 64, p(1), 0, 0, 64, p(2), 0,
                              0, 64, 0, 0, 0, 0, p(3), 0, 0, 64, p(4), 0, 0, 64, p(5), 0, 0, 64,
                              p(6), 0, 0, 64, p(7), 0, 0, 64, p(8), 0, gGradsBf16, gInputsBf16);
}
/// `device` compiled for bf16 with the hand-written kernels loaded and
/// TFC_ATTENTION_WGMMA on, and attentionBackward's nine buffers there.
std::vector<void *> bf16AttentionDevice(CudaDevice &device) {
  device.configure({0, /*graphs=*/false});
  device.loadLayerKernels();
  device.setGemmPrecision(GemmPrecision::Bf16);
  device.setWgmmaAttention(true);
  std::vector<void *> buffers(9);
  for (void *&buffer : buffers)
    buffer = device.allocate(64 * 64 * sizeof(float));
  return buffers;
}
/// Its forward on the same buffers (q, k, v, out: the eighth, stats).
void attentionForward(void **b) {
  auto p = [&](int i) { return intptr_t(b[i]); };
  tfc_cuda_attention_forward(1, 1, 64, 64, 64, 64, 0.125f, p(0), 0, 0, 64, p(1), 0, 0, 64, p(2), 0,
                             0, 64, 0, 0, 0, 0, p(7), 0, 0, 64, p(8), 0, gInputsBf16);
}
} // namespace

// The wgmma dkvs store fp32 gradients alone: an attention backward whose
// dk and dv go out as bf16 (gradsBf16, --precision bf16's QKV gradients)
// takes the tensor-core dkv beside wgmma's dq, also with the wide kernels;
// one of dk and dv as bf16 is refused, naming the call.
TEST_F(CudaRuntimeTest, AttentionBf16GradientsTakeTheTensorCoreDkv) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  std::vector<void *> buffers = bf16AttentionDevice(*device);
  const std::string dq = "cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dq_kernel, grid 1x1x1",
                    wideDq = "cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dq_wide_kernel,",
                    wgmmaDkv = "cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dkv_kernel,",
                    wideDkv = "cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dkv_wide_kernel,",
                    tcDkv = "cuLaunchKernel(tfc_cuda_attention_tc_backward_dkv_kernel, grid 1x1x1";
  std::string error;
  gGradsBf16 = 0;
  ASSERT_TRUE(device->run(attentionBackward, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count(dq), 1u) << log();
  EXPECT_EQ(count(wgmmaDkv), 1u) << log();
  EXPECT_EQ(count(tcDkv), 0u) << log();
  namespace at = tfc::abi::attention;
  gGradsBf16 = at::kDqBf16 | at::kDkBf16 | at::kDvBf16;
  ASSERT_TRUE(device->run(attentionBackward, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count(dq), 2u) << log();
  EXPECT_EQ(count(wgmmaDkv), 1u) << log();
  EXPECT_EQ(count(tcDkv), 1u) << log();
  // dq before dkv, which reads the statistics dq stored.
  const std::string all = log();
  EXPECT_LT(all.rfind(dq), all.find(tcDkv)) << all;
  // The wide kernels: the wide dq, and still the tensor-core dkv.
  device->setWideAttention(true);
  gGradsBf16 = at::kDkBf16 | at::kDvBf16;
  ASSERT_TRUE(device->run(attentionBackward, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count(wideDq), 1u) << log();
  EXPECT_EQ(count(wideDkv), 0u) << log();
  EXPECT_EQ(count(tcDkv), 2u) << log();
  gGradsBf16 = 0;
  ASSERT_TRUE(device->run(attentionBackward, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count(wideDkv), 1u) << log();
  EXPECT_EQ(count(tcDkv), 2u) << log();
  device->setWideAttention(false);
  // dk as bf16 without dv: refused before any launch.
  const size_t launches = count("cuLaunchKernel(");
  gGradsBf16 = at::kDkBf16;
  EXPECT_FALSE(device->run(attentionBackward, buffers.data(), buffers.size(), error));
  EXPECT_EQ(error, "tfc_cuda_attention_backward: gradsBf16 2 stores one of dk and dv as bf16: "
                   "the kernels store both or neither");
  EXPECT_EQ(count("cuLaunchKernel("), launches) << log();
  gGradsBf16 = 0;
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();
  for (void *buffer : buffers)
    device->release(buffer);
}

// q, k and v as bf16 bits (inputsBf16: a QKV projection stored in bf16)
// run on attention_tc.cu's kernels, and so does the backward with dO as
// bits too (kDoBf16); under TFC_ATTENTION_WGMMA the forward takes wgmma's
// bf16 kernel (cp.async copies the bits; its wide one with
// TFC_ATTENTION_WIDE) and, with dO as bits on the forward's statistics, dq
// wgmma's bf16 dq, and with dk and dv as bits too dkv its bf16 dkv; refused,
// before any launch, without the tensor-core kernels
// (an fp32 model), with rows not 8-byte aligned (an f32 dO's not 16), and
// for a flag the kernels do not know (kDoBf16 on the forward).
TEST_F(CudaRuntimeTest, AttentionBf16InputsTakeTheTensorCoreKernels) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  std::vector<void *> buffers = bf16AttentionDevice(*device);
  namespace at = tfc::abi::attention;
  std::string error;
  gInputsBf16 = at::kQkvBf16;
  ASSERT_TRUE(device->run(attentionForward, buffers.data(), buffers.size(), error)) << error;
  ASSERT_TRUE(device->run(attentionBackward, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_wgmma_forward_bf16_kernel, grid 1x1x1"), 1u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_tc_backward_dq_kernel, grid 1x1x1"), 1u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_tc_backward_dkv_kernel, grid 1x1x1"), 1u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_wgmma_"), 1u) << log();
  device->setWideAttention(true);
  ASSERT_TRUE(device->run(attentionForward, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_wgmma_forward_wide_kernel, grid 1x1x1"), 1u)
      << log();
  device->setWideAttention(false);
  device->setWgmmaAttention(false);
  ASSERT_TRUE(device->run(attentionForward, buffers.data(), buffers.size(), error)) << error;
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_tc_forward_kernel, grid 1x1x1"), 1u) << log();
  device->setWgmmaAttention(true);
  const size_t launches = count("cuLaunchKernel(");
  std::vector<void *> shifted = buffers; // q 4 bytes on: rows not 8-byte aligned
  shifted[0] = static_cast<char *>(buffers[0]) + 4;
  EXPECT_FALSE(device->run(attentionForward, shifted.data(), shifted.size(), error));
  EXPECT_EQ(error, "tfc_cuda_attention_forward: bf16 q, k and v need each head's rows 8-byte "
                   "aligned (strides multiples of 4)");
  shifted = buffers; // dO 8 bytes on: 8-byte aligned, not 16
  shifted[3] = static_cast<char *>(buffers[3]) + 8;
  EXPECT_FALSE(device->run(attentionBackward, shifted.data(), shifted.size(), error));
  EXPECT_EQ(error, "tfc_cuda_attention_backward: bf16 q, k and v need dO's rows 16-byte aligned "
                   "(its strides multiples of 4)");
  gInputsBf16 = 2;
  EXPECT_FALSE(device->run(attentionBackward, buffers.data(), buffers.size(), error));
  EXPECT_EQ(error, "tfc_cuda_attention_backward: inputsBf16 2 is none of 0, kQkvBf16 and "
                   "kQkvBf16 | kDoBf16");
  // dO as bf16 bits too: the backward's alone, its rows 8-byte aligned.
  gInputsBf16 = at::kQkvBf16 | at::kDoBf16;
  EXPECT_FALSE(device->run(attentionForward, buffers.data(), buffers.size(), error));
  EXPECT_EQ(error, "tfc_cuda_attention_forward: inputsBf16 3 is neither 0 nor kQkvBf16 (kDoBf16 "
                   "is the backward's)");
  shifted = buffers; // dO 4 bytes on: not 8-byte aligned
  shifted[3] = static_cast<char *>(buffers[3]) + 4;
  EXPECT_FALSE(device->run(attentionBackward, shifted.data(), shifted.size(), error));
  EXPECT_EQ(error, "tfc_cuda_attention_backward: a bf16 dO needs each head's rows 8-byte aligned "
                   "(strides multiples of 4)");
  EXPECT_EQ(count("cuLaunchKernel("), launches) << log();
  // q, k, v and dO all bits, on the forward's statistics: wgmma's bf16 dq
  // (57 KiB of dynamic shared memory, opted into once), the tensor cores'
  // dkv; without the statistics the tensor cores' dq.
  shifted[3] = static_cast<char *>(buffers[3]) + 8; // 8-byte aligned: enough for bits
  ASSERT_TRUE(device->run(attentionBackward, shifted.data(), shifted.size(), error)) << error;
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dq_bf16_kernel, grid 1x1x1, "
                  "block 128x1x1, smem 58368"),
            1u)
      << log();
  EXPECT_EQ(count("cuFuncSetAttribute(tfc_cuda_attention_wgmma_backward_dq_bf16_kernel, 58368)"),
            1u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_tc_backward_dq_kernel, grid 1x1x1"), 1u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_tc_backward_dkv_kernel, grid 1x1x1"), 2u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_wgmma_"), 3u) << log(); // 2 forwards, dq
  device->setSavedAttentionStats(false);
  ASSERT_TRUE(device->run(attentionBackward, shifted.data(), shifted.size(), error)) << error;
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_tc_backward_dq_kernel, grid 1x1x1"), 2u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_wgmma_"), 3u) << log();
  device->setSavedAttentionStats(true);
  // And dk and dv as bf16 bits (--precision bf16's): wgmma's bf16 dkv
  // (65 KiB of dynamic shared memory) after its bf16 dq.
  gGradsBf16 = at::kDqBf16 | at::kDkBf16 | at::kDvBf16;
  ASSERT_TRUE(device->run(attentionBackward, shifted.data(), shifted.size(), error)) << error;
  gGradsBf16 = 0;
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel, grid 1x1x1, "
                  "block 128x1x1, smem 66560"),
            1u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dq_bf16_kernel,"), 2u) << log();
  EXPECT_LT(log().rfind("cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dq_bf16_kernel,"),
            log().rfind("cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel,"))
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_attention_tc_backward_dkv_kernel, grid 1x1x1"), 3u)
      << log();
  const size_t withDo = count("cuLaunchKernel(");
  gInputsBf16 = at::kQkvBf16;
  device->setGemmPrecision(GemmPrecision::Fp32);
  EXPECT_FALSE(device->run(attentionBackward, buffers.data(), buffers.size(), error));
  EXPECT_EQ(error.rfind("tfc_cuda_attention_backward: bf16 q, k and v need the tensor-core "
                        "kernels (a model compiled with --precision bf16 or tf32",
                        0),
            0u)
      << error;
  EXPECT_EQ(count("cuLaunchKernel("), withDo) << log();
  gInputsBf16 = 0;
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();
  for (void *buffer : buffers)
    device->release(buffer);
}

// TFC_DEPENDENT_LAUNCH=1's setting: the hand-written kernels go out as
// programmatic dependent launches (cuLaunchKernelEx with
// PROGRAMMATIC_STREAM_SERIALIZATION), on sm_90 and later only; off, and by
// default, plain cuLaunchKernel.
TEST_F(CudaRuntimeTest, DependentLaunchesOfTheHandWrittenKernels) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  device->configure({0, /*graphs=*/false});
  device->loadLayerKernels();
  EXPECT_FALSE(device->dependentLaunch()); // the default
  std::vector<void *> buffers(7);
  for (void *&buffer : buffers)
    buffer = device->allocate(256);
  gNormRows = 64;
  gNormD = 32;
  const std::string plain = "cuLaunchKernel(tfc_cuda_layer_norm_backward_kernel, grid 1x1x1",
                    dependent = "cuLaunchKernelEx(tfc_cuda_layer_norm_backward_kernel, grid "
                                "1x1x1, block 256x1x1, smem 0, programmatic)";
  auto run = [&] {
    std::string error;
    EXPECT_TRUE(device->run(layerNormBackward, buffers.data(), buffers.size(), error)) << error;
  };
  run();
  EXPECT_EQ(count(plain), 1u) << log();
  device->setDependentLaunch(true);
  EXPECT_TRUE(device->dependentLaunch()); // the fake is sm_90
  run();
  EXPECT_EQ(count(dependent), 1u) << log();
  EXPECT_EQ(count(plain), 1u) << log();
  device->setDependentLaunch(false);
  run();
  EXPECT_EQ(count(plain), 2u) << log();
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();
  for (void *buffer : buffers)
    device->release(buffer);
}

// Below compute capability 9.0 there is no programmatic dependent launch:
// the setting stays off.
TEST(CudaRuntimeErrors, NoDependentLaunchBelowSm90) {
  ScopedEnv driver{"TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER};
  ScopedEnv major{"TFC_FAKE_CUDA_CC_MAJOR", "8"};
  std::string error;
  std::unique_ptr<CudaDevice> device = CudaDevice::openIndex(0, error);
  ASSERT_TRUE(device) << error;
  device->setDependentLaunch(true);
  EXPECT_FALSE(device->dependentLaunch());
}

TEST_F(CudaRuntimeTest, LargeSharedMemoryIsOptedInto) {
  // 64 KiB of dynamic shared memory needs cuFuncSetAttribute first (once).
  auto launch = [](void **buffers) {
    intptr_t slots[3] = {intptr_t(buffers[0]), intptr_t(buffers[0]), 0};
    tfc_cuda_launch(0, 1, 1, 1, 128, 1, 1, 65536, 3, intptr_t(slots));
    tfc_cuda_launch(0, 1, 1, 1, 128, 1, 1, 65536, 3, intptr_t(slots));
  };
  void *x = device->allocate(64);
  void *buffers[] = {x};
  std::string error;
  device->configure({0, false});
  ASSERT_TRUE(device->run(launch, buffers, 1, error)) << error;
  EXPECT_EQ(count("cuFuncSetAttribute(tfc_kernel_scale, 65536)"), 1u) << log();
  EXPECT_EQ(count("smem 65536)"), 2u) << log();
  device->release(x);
}

//===- tfc_cuda_sgemm against a naive reference ----------------------------===//

namespace {

struct GemmCase {
  int64_t batch, m, n, k;
  bool transA, transB, accumulate, reduction;
  int64_t pad; // extra elements on every leading dimension
};

std::string caseName(const ::testing::TestParamInfo<GemmCase> &info) {
  const GemmCase &c = info.param;
  return "b" + std::to_string(c.batch) + "_" + std::to_string(c.m) + "x" + std::to_string(c.n) +
         "x" + std::to_string(c.k) + (c.transA ? "_At" : "") + (c.transB ? "_Bt" : "") +
         (c.accumulate ? "_acc" : "") + (c.reduction ? "_sum" : "") +
         (c.pad ? "_pad" + std::to_string(c.pad) : "");
}

GemmArgs gGemm;
void gemmEntry(void **) {
  tfc_cuda_sgemm(gGemm[0], gGemm[1], gGemm[2], gGemm[3], gGemm[4], gGemm[5], gGemm[6], gGemm[7],
                 gGemm[8], gGemm[9], gGemm[10], gGemm[11], gGemm[12], gGemm[13], gGemm[14],
                 gGemm[15]);
}

/// tfc_sgemm's meaning, in double: Gemm.h.
void reference(const GemmCase &c, int64_t lda, int64_t ldb, int64_t ldc, int64_t strideA,
               int64_t strideB, int64_t strideC, const std::vector<float> &a,
               const std::vector<float> &b, std::vector<double> &out) {
  for (int64_t item = 0; item < c.batch; ++item)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          double x = c.transA ? a[size_t(item * strideA + p * lda + i)]
                              : a[size_t(item * strideA + i * lda + p)];
          double y = c.transB ? b[size_t(item * strideB + j * ldb + p)]
                              : b[size_t(item * strideB + p * ldb + j)];
          sum += x * y;
        }
        out[size_t(item * strideC + i * ldc + j)] += sum;
      }
}

class CudaSgemmTest : public CudaRuntimeTest, public ::testing::WithParamInterface<GemmCase> {};

} // namespace

TEST_P(CudaSgemmTest, MatchesNaiveReference) {
  const GemmCase c = GetParam();
  const int64_t lda = (c.transA ? c.m : c.k) + c.pad, ldb = (c.transB ? c.k : c.n) + c.pad;
  const int64_t ldc = c.n + c.pad;
  const int64_t rowsA = c.transA ? c.k : c.m, rowsB = c.transB ? c.n : c.k;
  const int64_t strideA = rowsA * lda + 3, strideB = rowsB * ldb + 5;
  const int64_t strideC = c.reduction ? 0 : c.m * ldc + 1;
  const size_t sizeA = size_t(c.batch * strideA), sizeB = size_t(c.batch * strideB);
  const size_t sizeC = size_t(c.reduction ? c.m * ldc : c.batch * strideC);
  std::vector<float> a(sizeA), b(sizeB), c0(sizeC);
  for (size_t i = 0; i < sizeA; ++i)
    a[i] = float(int((i * 37) % 17) - 8) / 8.0f;
  for (size_t i = 0; i < sizeB; ++i)
    b[i] = float(int((i * 53) % 13) - 6) / 4.0f;
  for (size_t i = 0; i < sizeC; ++i)
    c0[i] = float(int(i % 7) - 3);

  float *da = static_cast<float *>(device->allocate(sizeA * 4));
  float *db = static_cast<float *>(device->allocate(sizeB * 4));
  float *dc = static_cast<float *>(device->allocate(sizeC * 4));
  ASSERT_TRUE(da && db && dc);
  device->copyIn(da, a.data(), sizeA * 4);
  device->copyIn(db, b.data(), sizeB * 4);
  gGemm = {c.batch, c.m,          c.n,          c.k,        intptr_t(da), lda,
           strideA, c.transA,     intptr_t(db), ldb,        strideB,      c.transB,
           intptr_t(dc), ldc,     strideC,      c.accumulate};
  void *buffers[] = {da, db, dc};
  // Three calls: eager, captured, replayed; each on fresh inputs (A scaled
  // by the call's number) so that a replay that computed nothing would show.
  for (int call = 1; call <= 3; ++call) {
    std::vector<float> scaled = a;
    for (float &v : scaled)
      v *= float(call);
    device->copyIn(da, scaled.data(), sizeA * 4);
    device->copyIn(dc, c0.data(), sizeC * 4);
    std::string error;
    ASSERT_TRUE(device->run(gemmEntry, buffers, 3, error)) << error;
    std::vector<float> got(sizeC);
    device->copyOut(got.data(), dc, sizeC * 4);
    ASSERT_EQ(device->error(), "");

    std::vector<double> want(sizeC);
    for (size_t i = 0; i < sizeC; ++i)
      want[i] = c.accumulate ? c0[i] : 0.0;
    GemmCase asRef = c;
    if (c.reduction) // every item into the one C
      reference(asRef, lda, ldb, ldc, strideA, strideB, 0, scaled, b, want);
    else
      reference(asRef, lda, ldb, ldc, strideA, strideB, strideC, scaled, b, want);
    for (int64_t item = 0; item < (c.reduction ? 1 : c.batch); ++item)
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
          size_t at = size_t(item * strideC + i * ldc + j);
          ASSERT_NEAR(got[at], want[at], 1e-4 * (1 + std::fabs(want[at])))
              << "call " << call << " item " << item << " (" << i << ", " << j << ")";
        }
    // Padding between rows and items is never written.
    for (size_t at = 0; at < sizeC; ++at) {
      int64_t inItem = c.reduction ? int64_t(at) : int64_t(at) % strideC;
      if (inItem >= c.m * ldc || inItem % ldc >= c.n) {
        ASSERT_EQ(got[at], c0[at]) << "padding at " << at;
      }
    }
  }
  EXPECT_EQ(device->graphsCaptured(), 1u);
  EXPECT_EQ(count("cublasLtMatmul("), size_t(2 * (c.reduction ? c.batch : 1))) << log();
  device->release(da);
  device->release(db);
  device->release(dc);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaSgemmTest,
    ::testing::Values(GemmCase{1, 5, 7, 3, false, false, false, false, 0},
                      GemmCase{1, 5, 7, 3, true, false, false, false, 2},
                      GemmCase{1, 5, 7, 3, false, true, false, false, 1},
                      GemmCase{1, 4, 6, 9, true, true, true, false, 3},
                      GemmCase{3, 4, 5, 6, false, false, false, false, 0},
                      GemmCase{3, 4, 5, 6, true, true, false, false, 2},
                      GemmCase{2, 3, 8, 5, false, true, true, false, 1},
                      GemmCase{4, 6, 3, 2, false, false, false, true, 0},
                      GemmCase{3, 2, 5, 7, true, false, true, true, 1},
                      GemmCase{1, 1, 1, 1, false, false, true, false, 0}),
    caseName);

namespace {
std::array<intptr_t, 22> gFused;
void fusedEntry(void **) {
  const auto &g = gFused;
  tfc_cuda_sgemm_fused(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11],
                       g[12], g[13], g[14], g[15], g[16], g[17], g[18], g[19], g[20], g[21]);
}
} // namespace

// tfc_cuda_sgemm_fused: C = relu?(A B^T + bias[n] + R), R another matrix
// (its own pitch) or C itself, as one cublasLtMatmul with cuBLASLt's
// epilogue; captured and replayed with the same bias.
TEST_F(CudaRuntimeTest, FusedEpiloguesMatchTheReference) {
  const int64_t m = 5, n = 6, k = 4, ldr = 8;
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(n * k)),
      bias(static_cast<size_t>(n)), r(static_cast<size_t>(m * ldr));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(int((i * 37) % 17) - 8) / 8.0f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(int((i * 53) % 13) - 6) / 4.0f;
  for (size_t i = 0; i < bias.size(); ++i)
    bias[i] = float(int(i) - 3) / 2.0f;
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = float(int(i % 5) - 2);
  auto *da = static_cast<float *>(device->allocate(a.size() * 4));
  auto *db = static_cast<float *>(device->allocate(b.size() * 4));
  auto *dbias = static_cast<float *>(device->allocate(bias.size() * 4));
  auto *dr = static_cast<float *>(device->allocate(r.size() * 4));
  auto *dc = static_cast<float *>(device->allocate(size_t(m * n) * 4));
  ASSERT_TRUE(da && db && dbias && dr && dc);
  device->copyIn(da, a.data(), a.size() * 4);
  device->copyIn(db, b.data(), b.size() * 4);
  device->copyIn(dbias, bias.data(), bias.size() * 4);
  device->copyIn(dr, r.data(), r.size() * 4);
  const std::vector<float> c0(size_t(m * n), 0.5f);
  struct Case {
    bool relu, withBias;
    int residual; // 0 none, 1 R, 2 C itself
  };
  std::vector<void *> tokens;
  for (Case e : {Case{true, true, 0}, Case{false, true, 1}, Case{true, false, 2},
                 Case{false, true, 2}}) {
    const intptr_t residual = e.residual == 1 ? intptr_t(dr) : e.residual == 2 ? intptr_t(dc) : 0;
    const intptr_t ldResidual = e.residual == 1 ? ldr : e.residual == 2 ? n : 0;
    gFused = {1, m, n, k, intptr_t(da), k, 0, 0, intptr_t(db), k, 0, 1, intptr_t(dc), n, 0, 0,
              e.relu, e.withBias ? intptr_t(dbias) : 0, residual, ldResidual, 0, 0};
    // A graph is kept per buffer set: a buffer of the case's own (kept to
    // the end, so not reused) makes its own.
    void *token = tokens.emplace_back(device->allocate(4));
    void *buffers[] = {da, db, dbias, dr, dc, token};
    for (int call = 0; call < 3; ++call) { // eager, captured, replayed
      device->copyIn(dc, c0.data(), c0.size() * 4);
      std::string error;
      ASSERT_TRUE(device->run(fusedEntry, buffers, 6, error)) << error;
      std::vector<float> got(size_t(m * n));
      device->copyOut(got.data(), dc, got.size() * 4);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t p = 0; p < k; ++p)
            want += double(a[size_t(i * k + p)]) * b[size_t(j * k + p)];
          if (e.withBias)
            want += bias[size_t(j)];
          want += e.residual == 1 ? r[size_t(i * ldr + j)] : e.residual == 2 ? 0.5 : 0.0;
          if (e.relu && want < 0)
            want = 0;
          ASSERT_NEAR(got[size_t(i * n + j)], want, 1e-5)
              << "relu " << e.relu << " bias " << e.withBias << " residual " << e.residual
              << " call " << call << " (" << i << ", " << j << ")";
        }
    }
  }
  EXPECT_EQ(count(", bias, relu)"), 2u) << log(); // the first case: eager and captured
  for (void *buffer : {(void *)da, (void *)db, (void *)dbias, (void *)dr, (void *)dc})
    device->release(buffer);
  for (void *token : tokens)
    device->release(token);
}

// TFC_FAKE_CUBLASLT_NO_PRODUCTS (tools/gpu/dry-run.sh: a GPU script at full
// size on the fakes) leaves D as it was, the call checked and logged.
TEST_F(CudaRuntimeTest, FakeCublasLtCanSkipTheProducts) {
  const int64_t m = 4, n = 3, k = 2;
  auto *da = static_cast<float *>(device->allocate(size_t(m * k) * 4));
  auto *db = static_cast<float *>(device->allocate(size_t(n * k) * 4));
  auto *dc = static_cast<float *>(device->allocate(size_t(m * n) * 4));
  ASSERT_TRUE(da && db && dc);
  const std::vector<float> ones(size_t(m * k), 1.0f), c0(size_t(m * n), 0.5f);
  device->copyIn(da, ones.data(), size_t(m * k) * 4);
  device->copyIn(db, ones.data(), size_t(n * k) * 4);
  for (const char *skip : {"1", "0"}) {
    ScopedEnv noProducts{"TFC_FAKE_CUBLASLT_NO_PRODUCTS", skip};
    device->copyIn(dc, c0.data(), c0.size() * 4);
    gFused = {1, m, n, k, intptr_t(da), k, 0, 0, intptr_t(db), k, 0, 1, intptr_t(dc), n, 0, 0, 0, 0,
              0, 0, 0, 0};
    void *buffers[] = {da, db, dc};
    std::string error;
    ASSERT_TRUE(device->run(fusedEntry, buffers, 3, error)) << error;
    std::vector<float> got(size_t(m * n));
    device->copyOut(got.data(), dc, got.size() * 4);
    const float want = std::string(skip) == "1" ? 0.5f : float(k);
    for (float value : got)
      EXPECT_EQ(value, want) << "TFC_FAKE_CUBLASLT_NO_PRODUCTS=" << skip;
  }
  EXPECT_GE(count("cublasLtMatmul("), 2u) << log();
  for (void *buffer : {(void *)da, (void *)db, (void *)dc})
    device->release(buffer);
}

// ReLU's gradient by the mask its forward GEMM wrote: y = relu(x w^T +
// bias) with RELU_AUX_BIAS writes the mask of the sum > 0, and the
// backward's g = (dz v) * mask is one DRELU GEMM reading it (the layout is
// cuBLASLt's: ld a multiple of 128 bits). Captured and replayed too.
TEST_F(CudaRuntimeTest, ReluMaskFromTheForwardGemmGatesTheGradient) {
  namespace gemm = tfc::abi::gemm;
  const int64_t m = 6, n = 5, k = 4, k2 = 3; // y: m x n; dz: m x k2; v: k2 x n
  std::vector<float> x(static_cast<size_t>(m * k)), w(static_cast<size_t>(n * k)),
      bias(static_cast<size_t>(n)), dz(static_cast<size_t>(m * k2)),
      v(static_cast<size_t>(k2 * n));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int((i * 37) % 17) - 8) / 8.0f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(int((i * 53) % 13) - 6) / 4.0f;
  for (size_t i = 0; i < bias.size(); ++i)
    bias[i] = float(int(i) - 2) / 2.0f;
  for (size_t i = 0; i < dz.size(); ++i)
    dz[i] = float(int((i * 41) % 7) - 3);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = float(int((i * 23) % 5) - 2) / 2.0f;
  const int64_t ldMask = gemm::reluMaskLd(n);
  auto *dx = static_cast<float *>(device->allocate(x.size() * 4));
  auto *dw = static_cast<float *>(device->allocate(w.size() * 4));
  auto *dbias = static_cast<float *>(device->allocate(bias.size() * 4));
  auto *ddz = static_cast<float *>(device->allocate(dz.size() * 4));
  auto *dv = static_cast<float *>(device->allocate(v.size() * 4));
  auto *dy = static_cast<float *>(device->allocate(size_t(m * n) * 4));
  auto *dg = static_cast<float *>(device->allocate(size_t(m * n) * 4));
  void *mask = device->allocate(size_t(gemm::reluMaskBytes(m, n)));
  ASSERT_TRUE(dx && dw && dbias && ddz && dv && dy && dg && mask);
  EXPECT_EQ(ldMask, 128);
  device->copyIn(dx, x.data(), x.size() * 4);
  device->copyIn(dw, w.data(), w.size() * 4);
  device->copyIn(dbias, bias.data(), bias.size() * 4);
  device->copyIn(ddz, dz.data(), dz.size() * 4);
  device->copyIn(dv, v.data(), v.size() * 4);
  void *buffers[] = {dx, dw, dbias, ddz, dv, dy, dg, mask};
  for (int call = 0; call < 3; ++call) { // eager, captured, replayed
    std::string error;
    ASSERT_TRUE(device->run(
        [](void **b) {
          auto p = [&](int i) { return intptr_t(b[i]); };
          // y = relu(x w^T + bias), writing the mask.
          tfc_cuda_sgemm_fused(1, 6, 5, 4, p(0), 4, 0, 0, p(1), 4, 0, 1, p(5), 5, 0, 0,
                               tfc::abi::gemm::kRelu, p(2), 0, 0, p(7), 128);
          // g = (dz v) * mask.
          tfc_cuda_sgemm_fused(1, 6, 5, 3, p(3), 3, 0, 0, p(4), 5, 0, 0, p(6), 5, 0, 0,
                               tfc::abi::gemm::kReluGrad, 0, 0, 0, p(7), 128);
        },
        buffers, 8, error))
        << error;
    std::vector<float> y(static_cast<size_t>(m * n)), g(static_cast<size_t>(m * n));
    device->copyOut(y.data(), dy, y.size() * 4);
    device->copyOut(g.data(), dg, g.size() * 4);
    int gated = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double pre = bias[size_t(j)], product = 0;
        for (int64_t p = 0; p < k; ++p)
          pre += double(x[size_t(i * k + p)]) * w[size_t(j * k + p)];
        for (int64_t p = 0; p < k2; ++p)
          product += double(dz[size_t(i * k2 + p)]) * v[size_t(p * n + j)];
        ASSERT_NEAR(y[size_t(i * n + j)], pre > 0 ? pre : 0.0, 1e-5) << i << ", " << j;
        ASSERT_NEAR(g[size_t(i * n + j)], pre > 0 ? product : 0.0, 1e-5) << i << ", " << j;
        gated += pre <= 0 && product != 0;
      }
    EXPECT_GT(gated, 0); // the mask did cut something
  }
  EXPECT_EQ(count(", relu, relu mask)"), 2u) << log();
  EXPECT_EQ(count(", drelu)"), 2u) << log();
  // What cuBLASLt would refuse is refused before it, naming the GEMM.
  std::string error;
  gFused = {1, 6, 5, 3, intptr_t(ddz), 3, 0, 0, intptr_t(dv), 5, 0, 0, intptr_t(dg), 5, 0, 0,
            gemm::kReluGrad, 0, 0, 0, 0, 0};
  EXPECT_FALSE(device->run(fusedEntry, buffers, 8, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm_fused(batch 1, 6x5x3, A lda 3, B ldb 5, C ldc 5, relu's "
                   "gradient): relu's gradient without its mask");
  gFused[gemm::Aux] = intptr_t(mask);
  gFused[gemm::LdAux] = 64;
  EXPECT_FALSE(device->run(fusedEntry, buffers, 8, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm_fused(batch 1, 6x5x3, A lda 3, B ldb 5, C ldc 5, relu's "
                   "gradient, relu mask): a relu mask whose row pitch is not a multiple of 128 "
                   "bits of at least N, or whose address is not 16-byte aligned");
  for (void *buffer : buffers)
    device->release(buffer);
}

// --precision tf32 and bf16 (the manifest's "cuda" "precision"): each plan's
// matmul descriptor has the precision's compute type, fp32
// CUBLAS_COMPUTE_32F, tf32 CUBLAS_COMPUTE_32F_FAST_TF32 and bf16
// CUBLAS_COMPUTE_32F_FAST_16BF, and a GEMM of one shape in the three
// precisions is three plans. The fake rounds A and B as tensor cores read
// them: 1 + 2^-12 is below TF32's 10-bit mantissa (1 in TF32 and bf16), and
// 1 + 2^-9 below bf16's 7-bit one but not TF32's.
TEST_F(CudaRuntimeTest, GemmPrecisionIsTheDescriptorsComputeType) {
  device->configure({0, false}); // eager: one plan a precision, no capture
  const float belowTf32 = 1.0f + 0x1p-12f, belowBf16 = 1.0f + 0x1p-9f, one = 1.0f;
  void *a = device->allocate(4), *b = device->allocate(4), *c = device->allocate(4);
  ASSERT_TRUE(a && b && c);
  device->copyIn(b, &one, 4);
  void *buffers[] = {a, b, c};
  gGemm = {1, 1, 1, 1, intptr_t(a), 1, 0, 0, intptr_t(b), 1, 0, 0, intptr_t(c), 1, 0, 0};
  auto product = [&](GemmPrecision precision, float x) {
    device->copyIn(a, &x, 4);
    device->setGemmPrecision(precision);
    std::string error;
    EXPECT_TRUE(device->run(gemmEntry, buffers, 3, error)) << error;
    float got = 0;
    device->copyOut(&got, c, 4);
    return got;
  };
  EXPECT_EQ(device->gemmPrecision(), GemmPrecision::Fp32); // the default
  EXPECT_EQ(product(GemmPrecision::Fp32, belowTf32), belowTf32);
  EXPECT_EQ(count("cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F)"), 1u) << log();
  EXPECT_EQ(count("CUBLAS_COMPUTE_32F_FAST_TF32"), 0u) << log();
  EXPECT_EQ(product(GemmPrecision::Tf32, belowTf32), 1.0f);
  EXPECT_EQ(count("cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F_FAST_TF32)"), 1u) << log();
  EXPECT_EQ(product(GemmPrecision::Bf16, belowBf16), 1.0f);
  EXPECT_EQ(count("cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F_FAST_16BF)"), 1u) << log();
  EXPECT_EQ(device->cublasLt()->plans(), 3u);
  // Each precision's plan is reused; TF32 keeps what bf16 drops.
  EXPECT_EQ(product(GemmPrecision::Fp32, belowTf32), belowTf32);
  EXPECT_EQ(product(GemmPrecision::Tf32, belowBf16), belowBf16);
  EXPECT_EQ(product(GemmPrecision::Bf16, belowTf32), 1.0f);
  EXPECT_EQ(count("cublasLtMatmulDescCreate("), 3u) << log();
  EXPECT_EQ(count("cublasLtMatmul("), 6u) << log();
  // The manifest's names of them.
  EXPECT_EQ(parseGemmPrecision("fp32"), GemmPrecision::Fp32);
  EXPECT_EQ(parseGemmPrecision("tf32"), GemmPrecision::Tf32);
  EXPECT_EQ(parseGemmPrecision("bf16"), GemmPrecision::Bf16);
  EXPECT_EQ(parseGemmPrecision("fp16"), std::nullopt);
  EXPECT_EQ(computeType(GemmPrecision::Tf32), CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(computeType(GemmPrecision::Bf16), CUBLAS_COMPUTE_32F_FAST_16BF);
  for (void *buffer : {a, b, c})
    device->release(buffer);
}

// The storages of bf16 GEMMs (tf-bf16-gemm-operands' calls, tfc-kernel-check
// --bench-gemm's): A and B in bf16 (C fp32), or all three, multiplied in
// CUBLAS_COMPUTE_32F whatever the precision asked, a plan a storage; bf16 is
// read exactly and the bf16 result rounded to nearest even. A bf16 C takes
// a bias alone (a bf16 one), other epilogues refused.
TEST_F(CudaRuntimeTest, Bf16StoragesReadAndRoundExactly) {
  std::string error;
  std::unique_ptr<CublasLt> lt = CublasLt::load(error);
  ASSERT_TRUE(lt) << error;
  // A [2 x 3] = (1, 2, 3; 4, 5, 6), B [3 x 1] = (1, 1 + 2^-7, -1): bf16 holds them.
  const float aValues[] = {1, 2, 3, 4, 5, 6}, bValues[] = {1, 1.0f + 0x1p-7f, -1};
  std::vector<uint16_t> aBits, bBits;
  for (float x : aValues)
    aBits.push_back(kernels::bf16Bits(x));
  for (float x : bValues)
    bBits.push_back(kernels::bf16Bits(x));
  void *a = device->allocate(12), *b = device->allocate(6), *c = device->allocate(8),
       *c16 = device->allocate(4);
  ASSERT_TRUE(a && b && c && c16);
  device->copyIn(a, aBits.data(), 12);
  device->copyIn(b, bBits.data(), 6);
  GemmArgs args = {1, 2, 1, 3, intptr_t(a), 3, 0, 0, intptr_t(b), 1, 0, 0, intptr_t(c), 1, 0, 0};
  ASSERT_TRUE(
      lt->sgemm(args, {}, GemmPrecision::Tf32, nullptr, 0, 0, error, GemmStorage::Bf16Operands))
      << error;
  float got[2] = {};
  device->copyOut(got, c, 8);
  // 1 + 2 (1 + 2^-7) - 3 and 4 + 5 (1 + 2^-7) - 6, exactly.
  EXPECT_EQ(got[0], 2.0f * 0x1p-7f);
  EXPECT_EQ(got[1], 3.0f + 5.0f * 0x1p-7f);
  args[tfc::abi::gemm::C] = intptr_t(c16);
  ASSERT_TRUE(lt->sgemm(args, {}, GemmPrecision::Bf16, nullptr, 0, 0, error, GemmStorage::Bf16))
      << error;
  uint16_t bits[2] = {};
  device->copyOut(bits, c16, 4);
  EXPECT_EQ(kernels::bf16Float(bits[0]), 2.0f * 0x1p-7f);
  EXPECT_EQ(kernels::bf16Float(bits[1]), kernels::roundBf16(3.0f + 5.0f * 0x1p-7f));
  EXPECT_EQ(count("cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F)"), 2u) << log();
  EXPECT_EQ(lt->plans(), 2u);
  GemmEpilogue relu;
  relu.relu = true;
  EXPECT_FALSE(lt->sgemm(args, relu, GemmPrecision::Fp32, nullptr, 0, 0, error, GemmStorage::Bf16));
  EXPECT_NE(error.find("an epilogue other than a bias on a bf16 C"), std::string::npos) << error;
  // A bias alone on a bf16 C is bf16 bits too (cuBLASLt's bias takes D's
  // type: tf-bf16-gemm-operands' attention inputs), the sum rounded once.
  const uint16_t half = kernels::bf16Bits(0.5f);
  void *bias16 = device->allocate(2);
  device->copyIn(bias16, &half, 2);
  GemmEpilogue bias;
  bias.bias = CUdeviceptr(bias16);
  ASSERT_TRUE(lt->sgemm(args, bias, GemmPrecision::Bf16, nullptr, 0, 0, error, GemmStorage::Bf16))
      << error;
  device->copyOut(bits, c16, 4);
  EXPECT_EQ(kernels::bf16Float(bits[0]), 2.0f * 0x1p-7f + 0.5f);
  EXPECT_EQ(kernels::bf16Float(bits[1]), kernels::roundBf16(3.0f + 5.0f * 0x1p-7f + 0.5f));
  device->release(bias16);
  // bf16 A and B take epilogues (tf-bf16-gemm-operands' calls): C fp32.
  args[tfc::abi::gemm::C] = intptr_t(c);
  ASSERT_TRUE(
      lt->sgemm(args, relu, GemmPrecision::Bf16, nullptr, 0, 0, error, GemmStorage::Bf16Operands))
      << error;
  device->copyOut(got, c, 8);
  EXPECT_EQ(got[0], 2.0f * 0x1p-7f);
  for (void *buffer : {a, b, c, c16})
    device->release(buffer);
}

// TFC_GEMM_AUTOTUNE: a plan's first call, eager, times the heuristic's
// candidates (the fake's three, with times on the fake clock of 20, 17 and
// 16: the fastest, not the first faster by a tenth) on its own operands and
// keeps the fastest; the product is still right, later calls reuse the
// choice untimed, the cache keeps it for a later run, and a call that reads
// C (accumulate) is not timed: its plan keeps the first algorithm.
TEST_F(CudaRuntimeTest, GemmAutotuneKeepsTheFastestAlgorithm) {
  ScopedEnv times{"TFC_FAKE_CUBLASLT_ALGO_MICROSECONDS", "20,17,16"};
  const std::string cache =
      ::testing::TempDir() + "tfc-gemm-autotune-" + std::to_string(getpid()) + ".txt";
  std::remove(cache.c_str());
  ScopedEnv cacheFile{"TFC_GEMM_AUTOTUNE_CACHE", cache.c_str()};
  device->configure({0, false}); // eager
  device->setGemmAutotune(3);
  const float aValues[] = {1, 2}, bValues[] = {3, 4}, three = 3;
  void *a = device->allocate(8), *b = device->allocate(8), *c = device->allocate(4);
  ASSERT_TRUE(a && b && c);
  device->copyIn(a, aValues, 8);
  device->copyIn(b, bValues, 8);
  void *buffers[] = {a, b, c};
  gGemm = {1, 1, 1, 2, intptr_t(a), 2, 0, 0, intptr_t(b), 1, 0, 0, intptr_t(c), 1, 0, 0};
  std::string error;
  float got = 0;
  ASSERT_TRUE(device->run(gemmEntry, buffers, 3, error)) << error;
  device->copyOut(&got, c, 4);
  EXPECT_EQ(got, 11.0f);
  // Each candidate: a warm-up and 5 timed calls; then the call itself.
  EXPECT_EQ(count("cublasLtMatmul(1x1x2"), 3u * (1 + kGemmTuneRuns) + 1) << log();
  const std::string second = "cublasLtMatmul(1x1x2, batch 1, NN, beta 0, algo 2)";
  EXPECT_EQ(count(second), 1u + kGemmTuneRuns + 1) << log();
  // (The fake's clock counts the end event's record too: 5 calls + 1.)
  EXPECT_NE(device->cublasLt()->lastAlgorithm().find("algo 2, split-K 1, 1.00 waves; tuned: #2 "
                                                     "of 3, 0.0162 ms, the heuristic's first "
                                                     "0.0202"),
            std::string::npos)
      << device->cublasLt()->lastAlgorithm();
  ASSERT_TRUE(device->run(gemmEntry, buffers, 3, error)) << error;
  EXPECT_EQ(count("cublasLtMatmul(1x1x2"), 3u * (1 + kGemmTuneRuns) + 2);
  // The choice is in the cache, a line keyed by the GPU, driver, cuBLASLt
  // and the candidates, its value the configuration; a later run (the plans
  // made again) takes it untimed.
  std::string lines;
  {
    std::ifstream in(cache);
    lines.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_EQ(lines.rfind("Fake CUDA Device 0, sm_90, ", 0), 0u) << lines;
  EXPECT_NE(lines.find(" SMs, driver "), std::string::npos) << lines;
  EXPECT_NE(lines.find(", of 3: 1 1 1 2 "), std::string::npos) << lines;
  const std::string value = " = algo 2, split-K 1\n";
  ASSERT_GE(lines.size(), value.size());
  EXPECT_EQ(lines.substr(lines.size() - value.size()), value) << lines;
  device->setGemmAutotune(3);
  ASSERT_TRUE(device->run(gemmEntry, buffers, 3, error)) << error;
  EXPECT_EQ(count("cublasLtMatmul(1x1x2"), 3u * (1 + kGemmTuneRuns) + 3);
  EXPECT_EQ(count(second), 1u + kGemmTuneRuns + 3);
  EXPECT_NE(device->cublasLt()->lastAlgorithm().find("algo 2, split-K 1, 1.00 waves; #2 from the "
                                                     "tuning cache"),
            std::string::npos)
      << device->cublasLt()->lastAlgorithm();
  // Accumulating, another shape (K = 1): its plan's first call reads C.
  device->copyIn(c, &three, 4);
  gGemm = {1, 1, 1, 1, intptr_t(a), 1, 0, 0, intptr_t(b), 1, 0, 0, intptr_t(c), 1, 0, 1};
  ASSERT_TRUE(device->run(gemmEntry, buffers, 3, error)) << error;
  device->copyOut(&got, c, 4);
  EXPECT_EQ(got, 6.0f); // 3 + 1 * 3
  EXPECT_EQ(count("cublasLtMatmul(1x1x1"), 1u) << log();
  EXPECT_EQ(device->cublasLt()->lastAlgorithm(), "algo 0, split-K 1, 1.00 waves");
  // A residual that is C (C += A B^T by the epilogue): not timed either.
  device->copyIn(c, &three, 4);
  gFused = {1, 1,           1, 1, intptr_t(a), 1, 0, 0,           intptr_t(b), 1, 0,
            1, intptr_t(c), 1, 0, 0,           0, 0, intptr_t(c), 1,           0, 0};
  ASSERT_TRUE(device->run(fusedEntry, buffers, 3, error)) << error;
  device->copyOut(&got, c, 4);
  EXPECT_EQ(got, 6.0f);
  EXPECT_EQ(count("cublasLtMatmul(1x1x1"), 2u) << log();
  EXPECT_EQ(device->cublasLt()->lastAlgorithm(), "algo 0, split-K 1, 1.00 waves");
  for (void *buffer : {a, b, c})
    device->release(buffer);
  std::remove(cache.c_str());
}

// tfc-kernel-check --bench-gemm-algorithms: the plans take the heuristic's
// choice-th algorithm (the fake offers three, the same arithmetic), say
// which, and a choice past what it offers fails naming how many it does.
TEST_F(CudaRuntimeTest, HeuristicChoiceTakesThatAlgorithm) {
  std::string error;
  std::unique_ptr<CublasLt> lt = CublasLt::load(error);
  ASSERT_TRUE(lt) << error;
  const float aValues[] = {1, 2}, bValues[] = {3, 4};
  void *a = device->allocate(8), *b = device->allocate(8), *c = device->allocate(4);
  ASSERT_TRUE(a && b && c);
  device->copyIn(a, aValues, 8);
  device->copyIn(b, bValues, 8);
  const GemmArgs args = {1,           1, 1, 2, intptr_t(a), 2, 0, 0,
                         intptr_t(b), 1, 0, 0, intptr_t(c), 1, 0, 0};
  auto product = [&] {
    float got = 0;
    EXPECT_TRUE(lt->sgemm(args, {}, GemmPrecision::Fp32, nullptr, 0, 0, error)) << error;
    device->copyOut(&got, c, 4);
    return got;
  };
  EXPECT_EQ(product(), 11.0f);
  EXPECT_EQ(lt->lastAlgorithm(), "algo 0, split-K 1, 1.00 waves");
  lt->useHeuristicChoice(2);
  EXPECT_EQ(lt->plans(), 0u);
  EXPECT_EQ(product(), 11.0f);
  EXPECT_EQ(lt->lastAlgorithm(), "algo 2, split-K 1, 1.00 waves");
  lt->useHeuristicChoice(3);
  EXPECT_FALSE(lt->sgemm(args, {}, GemmPrecision::Fp32, nullptr, 0, 0, error));
  EXPECT_NE(error.find("cuBLASLt offers 3 algorithms for this GEMM"), std::string::npos) << error;
  EXPECT_EQ(lt->lastAlgorithm(), "");
  for (void *buffer : {a, b, c})
    device->release(buffer);
}

TEST_F(CudaRuntimeTest, FusedEpilogueErrorsNameTheGemm) {
  void *a = device->allocate(256);
  void *buffers[] = {a};
  std::string error;
  // A batch with an epilogue.
  gFused = {2, 2, 2, 2, intptr_t(a), 2, 4, 0, intptr_t(a), 2, 4, 0, intptr_t(a), 2, 4, 0,
            1, 0, 0, 0, 0, 0};
  EXPECT_FALSE(device->run(fusedEntry, buffers, 1, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm_fused(batch 2, 2x2x2, A lda 2, B ldb 2, C ldc 2, relu): an "
                   "epilogue on a batch or an accumulating product");
  // A bias outside device memory: the fake cuBLASLt refuses it.
  std::vector<float> host(4);
  gFused = {1, 2, 2, 2, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 0,
            0, intptr_t(host.data()), 0, 0, 0, 0};
  EXPECT_FALSE(device->run(fusedEntry, buffers, 1, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm_fused(batch 1, 2x2x2, A lda 2, B ldb 2, C ldc 2, bias): "
                   "cublasLtMatmul: CUBLAS_STATUS_INVALID_VALUE: the fake cuBLASLt refused it");
  device->release(a);
}

namespace {
std::array<intptr_t, 18> gBiasGrad;
void biasGradEntry(void **) {
  const auto &g = gBiasGrad;
  tfc_cuda_sgemm_bias_grad(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10],
                           g[11], g[12], g[13], g[14], g[15], g[16], g[17]);
}
} // namespace

/// Runs a weight gradient with its bias gradient on `device` (K = `rows`)
/// both ways: dW = dY^T X (A = dY stored K x M, transposed: the sums of A's
/// rows, M floats) and W^T's gradient X^T dY (B = dY stored K x N: N floats),
/// each eager, captured and replayed, the sums overwritten each time (the
/// vector starts at 7), against the product and sums in double (exact in
/// fp32 too: quarters and halves).
void expectBiasGradients(CudaDevice &device, int64_t rows) {
  const int64_t width = 5, other = 3; // dY's columns, X's columns
  std::vector<float> dy(size_t(rows * width)), x(size_t(rows * other));
  for (size_t i = 0; i < dy.size(); ++i)
    dy[i] = float(int((i * 29) % 19) - 9) / 4.0f;
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int((i * 31) % 11) - 5) / 2.0f;
  auto *ddy = static_cast<float *>(device.allocate(dy.size() * 4));
  auto *dx = static_cast<float *>(device.allocate(x.size() * 4));
  auto *dw = static_cast<float *>(device.allocate(size_t(width * other) * 4));
  auto *dsums = static_cast<float *>(device.allocate(size_t(width) * 4));
  ASSERT_TRUE(ddy && dx && dw && dsums);
  device.copyIn(ddy, dy.data(), dy.size() * 4);
  device.copyIn(dx, x.data(), x.size() * 4);
  std::vector<double> sums(size_t(width), 0.0);
  for (int64_t p = 0; p < rows; ++p)
    for (int64_t j = 0; j < width; ++j)
      sums[size_t(j)] += dy[size_t(p * width + j)];
  std::vector<void *> tokens;
  for (bool ofB : {false, true}) {
    // ofA: C (width x other) = dY^T X; ofB: C (other x width) = X^T dY.
    const int64_t m = ofB ? other : width, n = ofB ? width : other;
    if (ofB)
      gBiasGrad = {1, m, n, rows, intptr_t(dx), other, 0, 1, intptr_t(ddy), width, 0, 0,
                   intptr_t(dw), n, 0, 0, tfc::abi::gemm::kBiasGradOfB, intptr_t(dsums)};
    else
      gBiasGrad = {1, m, n, rows, intptr_t(ddy), width, 0, 1, intptr_t(dx), other, 0, 0,
                   intptr_t(dw), n, 0, 0, tfc::abi::gemm::kBiasGradOfA, intptr_t(dsums)};
    void *token = tokens.emplace_back(device.allocate(4));
    void *buffers[] = {ddy, dx, dw, dsums, token};
    for (int call = 0; call < 3; ++call) { // eager, captured, replayed
      const std::vector<float> sevens(size_t(width), 7.0f);
      device.copyIn(dsums, sevens.data(), sevens.size() * 4);
      std::string error;
      ASSERT_TRUE(device.run(biasGradEntry, buffers, 5, error)) << error;
      std::vector<float> got(static_cast<size_t>(width)), product(static_cast<size_t>(m * n));
      device.copyOut(got.data(), dsums, got.size() * 4);
      device.copyOut(product.data(), dw, product.size() * 4);
      for (int64_t j = 0; j < width; ++j)
        ASSERT_NEAR(got[size_t(j)], sums[size_t(j)], 1e-5) << "of B " << ofB << " sum " << j;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t p = 0; p < rows; ++p)
            want += ofB ? double(x[size_t(p * other + i)]) * dy[size_t(p * width + j)]
                        : double(dy[size_t(p * width + i)]) * x[size_t(p * other + j)];
          ASSERT_NEAR(product[size_t(i * n + j)], want, 1e-4) << "of B " << ofB;
        }
    }
  }
  for (void *buffer : {(void *)ddy, (void *)dx, (void *)dw, (void *)dsums})
    device.release(buffer);
  for (void *token : tokens)
    device.release(token);
}

// TFC_SMALL_GEMM=1 (setSmallGemms): a weight gradient with its bias gradient
// (K in slices, the column sums in parts) is one launch of gemm_small.cu's
// product kernel, the sums its last units, its last block adding both
// partials; past smallGemmLastBlockFinishes' bound (64 items summed into
// one 64 x 64 C: 2^18 partial floats) the finish kernel adds them.
TEST_F(CudaRuntimeTest, SmallGemmWithItsBiasGradientIsOneLaunch) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  namespace k = tfc::rt::cuda::kernels;
  using namespace tfc::abi::gemm;
  device->configure({0, /*graphs=*/false});
  device->loadLayerKernels();
  device->setSmallGemms(true);
  ASSERT_NE(device->lastBlockCounter(), 0u);
  const intptr_t a = intptr_t(device->allocate(64 * 64 * 128 * 4)),
                 b = intptr_t(device->allocate(64 * 64 * 128 * 4)),
                 c = intptr_t(device->allocate(64 * 64 * 4)),
                 sums = intptr_t(device->allocate(256));
  const std::string product = "cuLaunchKernel(tfc_cuda_small_gemm_kernel, grid ",
                    finish = "cuLaunchKernel(tfc_cuda_small_gemm_finish_kernel, grid ";
  // reverse's weight gradient, 32x32x2048 A^T with A's column sums.
  GemmArgs g{1, 32, 32, 2048, a, 32, 0, 1, b, 32, 0, 0, c, 32, 0, 0};
  GemmEpilogue e;
  e.biasGrad = CUdeviceptr(sums);
  device->sgemm(g, e);
  ASSERT_EQ(device->launchError(), "");
  const k::SmallGemmPlan plan = k::smallGemmPlan(32, 32, 2048, 1, false);
  const k::ColumnSumsPlan parts = k::columnSumsPlan(2048, 32);
  ASSERT_TRUE(plan.partial && parts.parts > 1);
  EXPECT_EQ(count(product + std::to_string(plan.units + parts.units) + "x1x1, block 256x1x1"), 1u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel("), 1u) << log();
  // 64 items of 64x64x128 summed into one C: the finish kernel's.
  g = {64, 64, 64, 128, a, 128, 64 * 128, 0, b, 64, 128 * 64, 0, c, 64, 0, 0};
  device->sgemm(g);
  ASSERT_EQ(device->launchError(), "");
  const k::SmallGemmPlan summed = k::smallGemmPlan(64, 64, 128, 64, true);
  ASSERT_FALSE(k::smallGemmLastBlockFinishes(summed, 64, 64, 0, 0));
  EXPECT_EQ(count(product + std::to_string(summed.units) + "x1x1"), 1u) << log();
  EXPECT_EQ(count(finish + "16x1x1, block 256x1x1"), 1u) << log();
  EXPECT_EQ(count("cuLaunchKernel("), 3u) << log();
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();
}

// tfc_cuda_sgemm_bias_grad: a linear layer's weight gradient and its bias
// gradient in one cublasLtMatmul, BGRADB for A's sums (cuBLASLt's B,
// transposed), BGRADA for B's.
TEST_F(CudaRuntimeTest, BiasGradientsAreTheOperandsColumnSums) {
  ASSERT_NO_FATAL_FAILURE(expectBiasGradients(*device, 9));
  // The first case eager and captured, the second captured (its graph);
  // replays run no host code.
  EXPECT_EQ(count(", bgradb)"), 2u) << log();
  EXPECT_EQ(count(", bgrada)"), 1u) << log();
}

// TFC_BGRAD_COLUMNS=1 (setBiasGradColumns): the plain product on cuBLASLt,
// no epilogue, and beside it gemm_small.cu's column sums of the operand
// (which the fake runs on the host), the same product and sums: K of one
// part (9 rows) and of two (300: the parts' sums in the workspace, added by
// the column-sums kernel's last block: no finish kernel).
TEST_F(CudaRuntimeTest, BiasGradientsBesideAPlainProductByColumnSums) {
#ifndef TFC_CUDA_HAND_KERNELS_BUILT
  GTEST_SKIP() << "the runtime was built without the hand-written kernels (no nvcc)";
#endif
  device->loadLayerKernels();
  device->setBiasGradColumns(true);
  device->setSmallGemms(false); // (by default products this small go to gemm_small.cu)
  // Logged as cuBLASLt sees them (column-major: N x M): the first case
  // eager and captured, the second captured; at K = 300 both captured (the
  // entry ran eagerly before).
  ASSERT_NO_FATAL_FAILURE(expectBiasGradients(*device, 9));
  EXPECT_EQ(count("cublasLtMatmul(3x5x9, batch 1, NT, beta 0)\n"), 2u) << log();
  EXPECT_EQ(count("cublasLtMatmul(5x3x9, batch 1, NT, beta 0)\n"), 1u) << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_column_sums_kernel, grid 1x1x1, block 256x1x1"), 3u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_small_gemm_finish_kernel"), 0u) << log();
  ASSERT_NO_FATAL_FAILURE(expectBiasGradients(*device, 300));
  EXPECT_EQ(count("cublasLtMatmul(3x5x300, batch 1, NT, beta 0)\n"), 1u) << log();
  EXPECT_EQ(count("cublasLtMatmul(5x3x300, batch 1, NT, beta 0)\n"), 1u) << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_column_sums_kernel, grid 2x1x1, block 256x1x1"), 2u)
      << log();
  EXPECT_EQ(count("cuLaunchKernel(tfc_cuda_small_gemm_finish_kernel"), 0u) << log();
  EXPECT_EQ(count(", bgrad"), 0u) << log();
  EXPECT_EQ(log().find("INVALID"), std::string::npos) << log();
}

// What cuBLASLt cannot sum is refused with the GEMM named, never computed
// wrong: an A that is not transposed (cuBLASLt's B untransposed), a
// transposed B, a batch.
TEST_F(CudaRuntimeTest, BiasGradientErrorsNameTheGemm) {
  void *a = device->allocate(256);
  void *buffers[] = {a};
  std::string error;
  gBiasGrad = {1, 2, 2, 2, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 0,
               tfc::abi::gemm::kBiasGradOfA, intptr_t(a) + 64};
  EXPECT_FALSE(device->run(biasGradEntry, buffers, 1, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm_bias_grad(batch 1, 2x2x2, A lda 2, B ldb 2, C ldc 2, the bias "
                   "gradient of A): the bias gradient of an A that is not transposed");
  gBiasGrad = {1, 2, 2, 2, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 1, intptr_t(a), 2, 0, 0,
               tfc::abi::gemm::kBiasGradOfB, intptr_t(a) + 64};
  EXPECT_FALSE(device->run(biasGradEntry, buffers, 1, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm_bias_grad(batch 1, 2x2x2, A lda 2, B^T ldb 2, C ldc 2, the bias "
                   "gradient of B): the bias gradient of a transposed B");
  gBiasGrad = {2, 2, 2, 2, intptr_t(a), 2, 4, 1, intptr_t(a), 2, 4, 0, intptr_t(a), 2, 4, 0,
               tfc::abi::gemm::kBiasGradOfA, intptr_t(a) + 64};
  EXPECT_FALSE(device->run(biasGradEntry, buffers, 1, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm_bias_grad(batch 2, 2x2x2, A^T lda 2, B ldb 2, C ldc 2, the "
                   "bias gradient of A): an epilogue on a batch or an accumulating product");
  device->release(a);
}

TEST_F(CudaRuntimeTest, SgemmErrorsNameTheGemm) {
  void *a = device->allocate(64);
  void *buffers[] = {a};
  std::string error;
  // A leading dimension shorter than a row.
  gGemm = {1, 2, 4, 3, intptr_t(a), 2, 0, 0, intptr_t(a), 4, 0, 0, intptr_t(a), 4, 0, 0};
  EXPECT_FALSE(device->run(gemmEntry, buffers, 1, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm(batch 1, 2x4x3, A lda 2, B ldb 4, C ldc 4): a leading "
                   "dimension shorter than its rows");
  // Outside device memory: the fake cuBLASLt refuses it.
  std::vector<float> host(64);
  gGemm = {1, 2, 2, 2, intptr_t(host.data()), 2, 0, 0, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 1};
  EXPECT_FALSE(device->run(gemmEntry, buffers, 1, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm(batch 1, 2x2x2, A lda 2, B ldb 2, C ldc 2, accumulate): "
                   "cublasLtMatmul: CUBLAS_STATUS_INVALID_VALUE: the fake cuBLASLt refused it");
  // Empty products do nothing.
  gGemm = {0, 2, 2, 2, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 0};
  EXPECT_TRUE(device->run(gemmEntry, buffers, 1, error)) << error;
  device->release(a);
}

TEST(CudaRuntimeErrors, NoCublasLtIsTheFirstGemmsError) {
  ScopedEnv driver("TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER);
  ScopedEnv cublas("TFC_CUBLASLT", "/nonexistent/libcublasLt.so.13");
  std::string error;
  std::unique_ptr<CudaDevice> device = CudaDevice::openIndex(0, error);
  ASSERT_TRUE(device) << error;
  EXPECT_FALSE(device->loadCublasLt(error));
  void *a = device->allocate(64);
  void *buffers[] = {a};
  gGemm = {1, 2, 2, 2, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 0, intptr_t(a), 2, 0, 0};
  EXPECT_FALSE(device->run(gemmEntry, buffers, 1, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm(batch 1, 2x2x2, A lda 2, B ldb 2, C ldc 2): no cuBLASLt: "
                   "tried /nonexistent/libcublasLt.so.13 (from TFC_CUBLASLT); GEMMs on the GPU "
                   "need CUDA 13's libcublasLt.so.13 (set TFC_CUBLASLT to its path)");
  device->release(a);
}

TEST(CudaRuntimeErrors, UnknownKernelIsNamed) {
  ScopedEnv driver("TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER);
  std::string error;
  std::unique_ptr<CudaDevice> device = CudaDevice::openIndex(0, error);
  ASSERT_TRUE(device) << error;
  EXPECT_FALSE(device->loadKernels(kPtx, {"tfc_kernel_scale", "tfc_kernel_gone"}, error));
  EXPECT_EQ(error, "the model's kernel image has no kernel 'tfc_kernel_gone' (kernel 1 of 2): "
                   "cuModuleGetFunction: CUDA_ERROR_NOT_FOUND: named symbol not found");
  EXPECT_FALSE(device->loadKernels("not PTX", {"k"}, error));
  EXPECT_EQ(error, "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid");
}

// The runtime switches as settings (what `tune` chooses among): in the
// order open() applies them, at their defaults; one set by its value,
// marked by where it came from; a value it does not take, or a name it
// lacks, refused by name. Nothing has been called: none applies but the
// dependent launch (the fake's sm_90).
TEST(CudaRuntimeErrors, SwitchesAreSettings) {
  ScopedEnv driver("TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER);
  std::string error;
  std::unique_ptr<CudaDevice> device = CudaDevice::openIndex(0, error);
  ASSERT_TRUE(device) << error;
  std::vector<std::string> names, values, applying;
  for (const tfc::rt::DeviceSetting &s : device->settings()) {
    names.push_back(s.name);
    values.push_back(s.value);
    EXPECT_EQ(s.source, tfc::rt::DeviceSetting::Source::Default) << s.name;
    if (s.applies)
      applying.push_back(s.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "TFC_SMALL_GEMM", "TFC_BGRAD_COLUMNS", "TFC_LAYER_NORM_ONE_LAUNCH",
                       "TFC_CROSS_ENTROPY_ONE_LAUNCH", "TFC_ATTENTION_SAVED_STATS",
                       "TFC_ATTENTION_DS", "TFC_ATTENTION_DQ_STORES_D", "TFC_ATTENTION_LEAN",
                       "TFC_ATTENTION_WGMMA", "TFC_ATTENTION_WIDE", "TFC_GRAPH_DEPENDENCIES",
                       "TFC_DEPENDENT_LAUNCH", "TFC_GEMM_AUTOTUNE"}));
  EXPECT_EQ(values, (std::vector<std::string>{"tiny", "0", "1", "1", "1", "1", "1", "0", "0", "0",
                                              "0", "0", "0"}));
  EXPECT_EQ(applying, std::vector<std::string>{"TFC_DEPENDENT_LAUNCH"});
  using Source = tfc::rt::DeviceSetting::Source;
  ASSERT_TRUE(device->applySetting("TFC_SMALL_GEMM", "0", Source::Tuned, error)) << error;
  ASSERT_TRUE(device->applySetting("TFC_GRAPH_DEPENDENCIES", "1", Source::Environment, error));
  const std::vector<tfc::rt::DeviceSetting> now = device->settings();
  EXPECT_EQ(now[0].value, "0");
  EXPECT_EQ(now[0].source, Source::Tuned);
  EXPECT_EQ(now[10].value, "1");
  EXPECT_EQ(now[10].source, Source::Environment);
  EXPECT_TRUE(device->graphDependencies());
  EXPECT_FALSE(now[11].applies); // dependent launches wait for no graph dependencies
  EXPECT_FALSE(device->applySetting("TFC_SMALL_GEMM", "some", Source::Tuned, error));
  EXPECT_EQ(error, "setting TFC_SMALL_GEMM takes tiny, 1 or 0, not 'some'");
  EXPECT_FALSE(device->applySetting("TFC_BGRAD_COLUMNS", "yes", Source::Tuned, error));
  EXPECT_EQ(error, "setting TFC_BGRAD_COLUMNS takes 0 or 1, not 'yes'");
  EXPECT_FALSE(device->applySetting("TFC_NOTHING", "1", Source::Tuned, error));
  EXPECT_EQ(error, "the CUDA device has no setting TFC_NOTHING");
  // Back to its default value: marked the default again.
  ASSERT_TRUE(device->applySetting("TFC_SMALL_GEMM", "tiny", Source::Default, error));
  EXPECT_EQ(device->settings()[0].source, Source::Default);
}

TEST(CudaRuntimeErrors, NoDriverOpensNothingAndSaysSo) {
  ScopedEnv driver("TFC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  CudaDevice device;
  EXPECT_EQ(device.name(), "cuda:0");
  device.configure({2, true});
  EXPECT_EQ(device.name(), "cuda:2");
  Manifest manifest;
  manifest.model = "m";
  manifest.device = "cuda";
  manifest.cuda = CudaSpec{{"sm_90"}, "ptx", {"k"}};
  std::string error;
  EXPECT_FALSE(device.open(manifest, error));
  // This test binary has no tfc_cuda_image: that is said first...
  EXPECT_EQ(error, "this binary holds no CUDA kernel image (no tfc_cuda_image)");
  // ...and `info` says why there is no GPU without failing.
  std::vector<std::string> lines = device.describe(manifest);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "cuda:2: none here: no CUDA driver: tried /nonexistent/libcuda.so.1 (from "
                      "TFC_CUDA_DRIVER); running on a GPU needs the NVIDIA driver (libcuda.so.1) "
                      "(info and init need no GPU; every other command does)");
  // Nothing works on an unopened device, and each says so.
  EXPECT_EQ(device.allocate(16), nullptr);
  EXPECT_FALSE(device.takeError(error));
  EXPECT_EQ(error, "the CUDA device is not open");
  void *none[] = {nullptr};
  EXPECT_FALSE(device.run(twoLaunches, none, 1, error));
  EXPECT_EQ(error, "the CUDA device is not open");
}

TEST(CudaRuntimeErrors, DescribeOnTheFake) {
  ScopedEnv driver("TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER);
  ScopedEnv noAutotune("TFC_GEMM_AUTOTUNE", ""); // whatever the shell exports
  CudaDevice device;
  Manifest manifest;
  manifest.device = "cuda";
  manifest.cuda = CudaSpec{{"sm_80", "sm_90"}, "fatbin", {"a", "b", "c"}};
  EntrySpec entry;
  entry.name = "predict";
  entry.arenaBytes = 1000;
  TensorSpec x;
  x.shape = {4, 8};
  entry.args.push_back(x);
  manifest.entries.push_back(entry);
  std::vector<std::string> lines;
  {
    ScopedEnv cache("TFC_TUNE_CACHE", "/kept/tuned.txt");
    lines = device.describe(manifest);
  }
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[0], std::string("cuda:0: Fake CUDA Device 0, sm_90, 80.0 GiB (driver ") +
                          TFC_FAKE_CUDA_DRIVER + ", CUDA 13.0)");
  EXPECT_EQ(lines[1], "kernels 3, a fatbin image with SASS for sm_80, sm_90 (missing)");
  EXPECT_EQ(lines[2], "precision fp32: cuBLASLt GEMMs (CUBLAS_COMPUTE_32F) and every kernel in "
                      "full FP32");
  // A model compiled before the generated kernels waited (no "dependent_launch").
  EXPECT_EQ(lines[3], "programmatic dependent launch (TFC_DEPENDENT_LAUNCH=1, off by default): the "
                      "hand-written kernels on sm_90 and later, the generated ones nowhere (no "
                      "SASS of theirs waits)");
  // The workspace (32 MiB), the arena (1,024 bytes), x (128, in 256) and
  // the last-block counter (4, in 256).
  EXPECT_EQ(plannedDeviceBytes(manifest), (size_t(32) << 20) + 1024 + 256 + 256);
  // No "graph" in the entry (a model compiled with --no-graph-dependencies).
  EXPECT_EQ(lines[4], "graph dependencies: none compiled in, a captured entry is a chain");
  EXPECT_EQ(lines[6].rfind("device memory: one allocation of 32.0 MiB (33,555,968 bytes) when "
                           "the device opens (parameters and optimizer state, which a step "
                           "updates in place,",
                           0),
            0u)
      << lines[6];
  // The runtime switches: the defaults, then tune's choice, then the environment.
  EXPECT_EQ(lines[7], "runtime settings (TFC_SMALL_GEMM and the other switches): the defaults, "
                      "then those `tune` chose for this model on this GPU, kept in "
                      "/kept/tuned.txt, then each one's environment variable where set");
  EXPECT_EQ(lines[9], "predict: 1.1 KiB of device memory (arguments, results and arena)");
  // GEMM autotuning: off unless TFC_GEMM_AUTOTUNE asks.
  EXPECT_NE(lines[5].find("; the heuristic's first algorithm a GEMM (TFC_GEMM_AUTOTUNE=1 times "
                          "its first 8)"),
            std::string::npos)
      << lines[5];
  {
    ScopedEnv autotune{"TFC_GEMM_AUTOTUNE", "4"};
    ScopedEnv cache{"TFC_GEMM_AUTOTUNE_CACHE", "/some/where.txt"};
    EXPECT_NE(device.describe(manifest)[5].find(
                  "; each GEMM's first call times the heuristic's first 4 algorithms and keeps "
                  "the fastest (TFC_GEMM_AUTOTUNE), its choices kept in /some/where.txt"),
              std::string::npos);
  }
  // What tf-graph-dependencies found, entry by entry.
  manifest.entries[0].graphOps = 12;
  manifest.entries[0].graphLongestPath = 9;
  lines = device.describe(manifest);
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[4], "graph dependencies (TFC_GRAPH_DEPENDENCIES=1, off by default): a captured "
                      "entry's independent launches and calls at once: predict 12 ops, 9 on the "
                      "longest path");
  // --precision tf32: the GEMMs on TF32 tensor cores, nothing else.
  manifest.cuda->precision = "tf32";
  manifest.cuda->dependentLaunch = {"sm_90"};
  lines = device.describe(manifest);
  ASSERT_EQ(lines.size(), 11u); // and a line on attention's kernels
  EXPECT_EQ(lines[2], "precision tf32: cuBLASLt GEMMs on TF32 tensor cores "
                      "(CUBLAS_COMPUTE_32F_FAST_TF32), every other kernel fp32");
  // The fake's GPU is an sm_90: it takes the wgmma image.
  EXPECT_EQ(lines[3], "attention on tensor cores (heads up to 64 wide, multiples of 16): "
                      "mma.sync; TFC_ATTENTION_LEAN=1 the lean forward and dq; "
                      "TFC_ATTENTION_WGMMA=1 wgmma for heads of 64 (sm_90a SASS: this GPU "
                      "takes it); with it, TFC_ATTENTION_WIDE=1 its forward, dq and dkv on two "
                      "warpgroups a block");
  EXPECT_EQ(lines[4], "programmatic dependent launch (TFC_DEPENDENT_LAUNCH=1, off by default): the "
                      "hand-written kernels on sm_90 and later, the generated ones on sm_90");
  {
    ScopedEnv ampere{"TFC_FAKE_CUDA_CC_MAJOR", "8"};
    EXPECT_NE(device.describe(manifest)[3].find(
                  "(sm_90a SASS: not this GPU's, sm_80: the switch changes nothing)"),
              std::string::npos);
  }
  manifest.cuda->precision = "bf16";
  lines = device.describe(manifest);
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines[2], "precision bf16: cuBLASLt GEMMs on bf16 tensor cores "
                      "(CUBLAS_COMPUTE_32F_FAST_16BF, or bf16 copies of A and B where tfc "
                      "compile's --bf16-operands made them), every other kernel fp32, "
                      "parameters, their gradients and the optimizer's state stored fp32, as "
                      "is every other tensor but those only GEMMs read (or a ReLU's gradient "
                      "tests): their bf16 copies alone, the products only loop nests read "
                      "(--no-bf16-gemm-results: fp32), and the QKV projections only attention "
                      "reads, with a bf16 copy of their bias, and the out projections' input "
                      "gradients, its backward's dO, which its mma.sync kernels read as bf16 "
                      "(--no-bf16-attention-inputs: fp32)");
}

// A training step's parameters and optimizer state take a spare each, which
// swaps with the current copy after the step, unless the step writes them
// over the current copy (tf-updates-in-place's in_place_of): then once.
TEST(CudaRuntimeErrors, PlannedMemorySparesOnlyWhatAStepDoesNotUpdateInPlace) {
  Manifest manifest;
  manifest.device = "cuda";
  manifest.cuda = CudaSpec{{"sm_90"}, "fatbin", {}};
  ParamSpec w;
  w.name = "w";
  w.shape = {100}; // 400 bytes, 512 in the pool
  manifest.params.push_back(w);
  auto tensor = [](tfc::abi::ValueKind kind, const std::string &name, std::vector<int64_t> shape) {
    TensorSpec t;
    t.kind = kind;
    t.name = name;
    t.shape = std::move(shape);
    return t;
  };
  EntrySpec step;
  step.name = tfc::abi::kTrainStep;
  step.arenaBytes = 64;
  step.args = {tensor(tfc::abi::ValueKind::Param, "w", {100}),
               tensor(tfc::abi::ValueKind::State, "w.exp_avg", {100})};
  step.results = {tensor(tfc::abi::ValueKind::Loss, "loss", {}),
                  tensor(tfc::abi::ValueKind::Param, "w", {100}),
                  tensor(tfc::abi::ValueKind::State, "w.exp_avg", {100})};
  manifest.entries.push_back(step);
  // The workspace, the counter (256), the arena (256), the loss in 4 slots
  // (4 x 256); w and its state 512 each, twice.
  const size_t fixed = (size_t(32) << 20) + 256 + 256 + 4 * 256;
  EXPECT_EQ(plannedDeviceBytes(manifest), fixed + 2 * 512 + 2 * 512);
  manifest.entries[0].results[1].inPlaceOf = 0; // w over its argument
  EXPECT_EQ(plannedDeviceBytes(manifest), fixed + 512 + 2 * 512);
  manifest.entries[0].results[2].inPlaceOf = 1; // and its state
  EXPECT_EQ(plannedDeviceBytes(manifest), fixed + 512 + 512);
  ScopedEnv driver("TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER);
  CudaDevice device;
  auto says = [&](const std::string &text) {
    for (const std::string &line : device.describe(manifest))
      if (line.find(text) != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(says("(parameters and optimizer state, which a step updates in place,"));
  manifest.entries[0].results[1].inPlaceOf = -1;
  EXPECT_TRUE(says("(parameters and optimizer state, twice for the 1 a step writes into spares,"));
}

// tf-bf16-gemm-operands' calls: kBf16 in both transpose flags reads A and B
// as bf16 (GemmStorage::Bf16Operands: a plan of its own, CUBLAS_COMPUTE_32F
// whatever the precision), on cuBLASLt even where a product that small would
// go to gemm_small.cu's fp32 kernels, epilogues included (the bias gradient
// sums the bf16 values). One operand bf16 and the other fp32 is refused,
// naming the GEMM.
TEST_F(CudaRuntimeTest, Bf16OperandCallsReadBf16) {
  namespace gemm = tfc::abi::gemm;
  device->configure({0, false});
  device->setGemmPrecision(GemmPrecision::Bf16);
  // dW (2 x 3) = dY^T X: dY stored 4 x 2 (A, transposed), X 4 x 3 (B);
  // db the sums of dY's rows. Values bf16 holds, so the products are exact.
  const float dy[] = {1, 2, 0.5f, -1, 3, 1.0f + 0x1p-7f, -2, 0.25f};
  const float x[] = {1, 0, 2, -1, 1, 0.5f, 4, 2, 1, 0, -3, 1};
  std::vector<uint16_t> dyBits, xBits;
  for (float v : dy)
    dyBits.push_back(kernels::bf16Bits(v));
  for (float v : x)
    xBits.push_back(kernels::bf16Bits(v));
  void *dA = device->allocate(16), *dB = device->allocate(24), *dC = device->allocate(24),
       *sums = device->allocate(8), *fp32 = device->allocate(48);
  ASSERT_TRUE(dA && dB && dC && sums && fp32);
  device->copyIn(dA, dyBits.data(), 16);
  device->copyIn(dB, xBits.data(), 24);
  void *buffers[] = {dA, dB, dC, sums, fp32};
  gBiasGrad = {1,
               2,
               3,
               4,
               intptr_t(dA),
               2,
               0,
               gemm::kTransposed | gemm::kBf16,
               intptr_t(dB),
               3,
               0,
               gemm::kBf16,
               intptr_t(dC),
               3,
               0,
               0,
               gemm::kBiasGradOfA,
               intptr_t(sums)};
  std::string error;
  ASSERT_TRUE(device->run(biasGradEntry, buffers, 5, error)) << error;
  float got[6] = {}, gotSums[2] = {};
  device->copyOut(got, dC, 24);
  device->copyOut(gotSums, sums, 8);
  for (int i = 0; i < 2; ++i) {
    float sum = 0;
    for (int p = 0; p < 4; ++p)
      sum += dy[p * 2 + i];
    EXPECT_EQ(gotSums[i], sum) << i;
    for (int j = 0; j < 3; ++j) {
      double want = 0;
      for (int p = 0; p < 4; ++p)
        want += double(dy[p * 2 + i]) * double(x[p * 3 + j]);
      EXPECT_EQ(got[i * 3 + j], float(want)) << i << ", " << j;
    }
  }
  EXPECT_EQ(count("cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F)"), 1u) << log();
  EXPECT_EQ(count(", bgradb)"), 1u) << log(); // our A is cuBLASLt's B
  // A bf16 A with an fp32 B.
  gGemm = {1,
           2,
           3,
           4,
           intptr_t(dA),
           2,
           0,
           gemm::kTransposed | gemm::kBf16,
           intptr_t(fp32),
           3,
           0,
           0,
           intptr_t(dC),
           3,
           0,
           0};
  EXPECT_FALSE(device->run(gemmEntry, buffers, 5, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm(batch 1, 2x3x4, A^T lda 2, B ldb 3, C ldc 3): one operand "
                   "in bf16 and the other in fp32, or a bf16 C of fp32 operands (cuBLASLt "
                   "multiplies bf16 by bf16)");
  for (void *buffer : buffers)
    device->release(buffer);
}

// tf-bf16-gemm-operands' gemm-results: kBf16 in Accumulate stores C as bf16
// (GemmStorage::Bf16: cuBLASLt's D in CUDA_R_16BF, CUBLAS_COMPUTE_32F), the
// exact products rounded to nearest even; a bf16 C of fp32 operands is
// refused, naming the GEMM.
TEST_F(CudaRuntimeTest, Bf16ResultCallsStoreBf16) {
  namespace gemm = tfc::abi::gemm;
  device->configure({0, false});
  device->setGemmPrecision(GemmPrecision::Bf16);
  // C (2 x 3) = A B: A 2 x 4, B 4 x 3, values bf16 holds; the sums need
  // more than bf16's 8 bits (1 + 2^-7 times an odd number).
  const float a[] = {1.0f + 0x1p-7f, 3, -2, 0.5f, 2, 1, 1, -1};
  const float b[] = {1, 0, 2, -1, 1, 0.5f, 4, 2, 1, 0, -3, 1.0f + 0x1p-7f};
  std::vector<uint16_t> aBits, bBits;
  for (float v : a)
    aBits.push_back(kernels::bf16Bits(v));
  for (float v : b)
    bBits.push_back(kernels::bf16Bits(v));
  void *dA = device->allocate(16), *dB = device->allocate(24), *dC = device->allocate(12),
       *fp32 = device->allocate(48);
  ASSERT_TRUE(dA && dB && dC && fp32);
  device->copyIn(dA, aBits.data(), 16);
  device->copyIn(dB, bBits.data(), 24);
  void *buffers[] = {dA, dB, dC, fp32};
  gGemm = {1,
           2,
           3,
           4,
           intptr_t(dA),
           4,
           0,
           gemm::kBf16,
           intptr_t(dB),
           3,
           0,
           gemm::kBf16,
           intptr_t(dC),
           3,
           0,
           gemm::kBf16};
  std::string error;
  ASSERT_TRUE(device->run(gemmEntry, buffers, 4, error)) << error;
  uint16_t got[6] = {};
  device->copyOut(got, dC, 12);
  size_t rounded = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      double want = 0;
      for (int p = 0; p < 4; ++p)
        want += double(a[i * 4 + p]) * double(b[p * 3 + j]);
      EXPECT_EQ(got[i * 3 + j], kernels::bf16Bits(float(want))) << i << ", " << j;
      rounded += kernels::bf16Float(got[i * 3 + j]) != float(want);
    }
  EXPECT_GT(rounded, 0u); // (some sums needed the rounding)
  EXPECT_EQ(count("cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F)"), 1u) << log();
  // fp32 A and B with a bf16 C.
  gGemm = {1, 2, 3,          4, intptr_t(fp32), 4, 0, 0, intptr_t(fp32), 3, 0, 0, intptr_t(dC),
           3, 0, gemm::kBf16};
  EXPECT_FALSE(device->run(gemmEntry, buffers, 4, error));
  EXPECT_EQ(error, "tfc_cuda_sgemm(batch 1, 2x3x4, A lda 4, B ldb 3, C ldc 3): one operand "
                   "in bf16 and the other in fp32, or a bf16 C of fp32 operands (cuBLASLt "
                   "multiplies bf16 by bf16)");
  for (void *buffer : buffers)
    device->release(buffer);
}
