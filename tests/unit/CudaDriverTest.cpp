//===- CudaDriverTest.cpp - the CUDA driver loaded at run time ------------===//
//
// runtime/cuda/Driver.h against a missing driver and against the fake one
// (FakeCudaDriver.cpp, built twice: resolved through cuGetProcAddress and
// through plain dlsym). No GPU or libcuda is needed.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/ScopedEnv.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/Driver.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

using namespace tfc::rt::cuda;

namespace {

using tfc::test::ScopedEnv;

/// The fake's own exports (log, reset), through the handle CudaDriver holds.
struct FakeControl {
  explicit FakeControl(const char *path) {
    handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (handle) {
      log = reinterpret_cast<const char *(*)()>(dlsym(handle, "tfcFakeCudaLog"));
      reset = reinterpret_cast<void (*)()>(dlsym(handle, "tfcFakeCudaReset"));
      allocated = reinterpret_cast<size_t (*)()>(dlsym(handle, "tfcFakeCudaAllocatedBytes"));
    }
  }
  ~FakeControl() {
    if (handle)
      dlclose(handle);
  }
  void *handle = nullptr;
  const char *(*log)() = nullptr;
  void (*reset)() = nullptr;
  size_t (*allocated)() = nullptr;
};

std::unique_ptr<CudaDriver> loadFake(const char *path, std::string &error) {
  ScopedEnv env("TFC_CUDA_DRIVER", path);
  return CudaDriver::load(error);
}

} // namespace

TEST(CudaDriverTest, FormatsBytes) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(3 * 1024), "3.0 KiB");
  EXPECT_EQ(formatBytes(size_t(1288490189)), "1.2 GiB");
}

TEST(CudaDriverTest, MissingOverrideSaysWhatWasTried) {
  ScopedEnv env("TFC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  std::string error;
  std::unique_ptr<CudaDriver> driver = CudaDriver::load(error);
  ASSERT_FALSE(driver);
  EXPECT_EQ(error, "no CUDA driver: tried /nonexistent/libcuda.so.1 (from TFC_CUDA_DRIVER); "
                   "running on a GPU needs the NVIDIA driver (libcuda.so.1)");
}

TEST(CudaDriverTest, DefaultSearchWithoutDriver) {
  ScopedEnv env("TFC_CUDA_DRIVER", nullptr);
  std::string error;
  std::unique_ptr<CudaDriver> driver = CudaDriver::load(error);
  if (driver)
    GTEST_SKIP() << "this machine has a CUDA driver: " << driver->path();
  EXPECT_NE(error.find("no CUDA driver: tried libcuda.so.1, /usr/local/nvidia/lib64/libcuda.so.1"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("needs the NVIDIA driver"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(CudaDriverTest, NotADriverLibrary) {
  // A library that loads but has none of the driver's entry points (libdl or
  // libc, whichever the loader finds first).
  std::string error;
  std::unique_ptr<CudaDriver> driver = CudaDriver::loadFrom({"libc.so.6"}, error);
  ASSERT_FALSE(driver);
  EXPECT_NE(error.find("the CUDA driver libc.so.6 has no cuGetErrorName, cuGetErrorString, cuInit"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("too old or not NVIDIA's"), std::string::npos) << error;
}

class FakeDriverTest : public ::testing::TestWithParam<const char *> {};

TEST_P(FakeDriverTest, InitDevicesAndMemory) {
  std::string error;
  std::unique_ptr<CudaDriver> driver = loadFake(GetParam(), error);
  ASSERT_TRUE(driver) << error;
  FakeControl fake(GetParam());
  ASSERT_TRUE(fake.log && fake.reset && fake.allocated);
  fake.reset();
  EXPECT_EQ(driver->path(), GetParam());

  ASSERT_TRUE(driver->init(error)) << error;
  EXPECT_EQ(driver->version(), 13000);
  int count = 0;
  ASSERT_TRUE(driver->deviceCount(count, error)) << error;
  EXPECT_EQ(count, 1);
  CUdevice device = -1;
  ASSERT_TRUE(driver->device(0, device, error)) << error;
  std::string name;
  ASSERT_TRUE(driver->deviceName(device, name, error)) << error;
  EXPECT_EQ(name, "Fake CUDA Device 0");
  size_t bytes = 0;
  ASSERT_TRUE(driver->deviceMemory(device, bytes, error)) << error;
  EXPECT_EQ(bytes, size_t(80) << 30);
  int major = 0, minor = -1;
  ASSERT_TRUE(driver->computeCapability(device, major, minor, error)) << error;
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);

  // Bytes there and back.
  const DriverApi &api = driver->api();
  std::vector<unsigned char> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = (unsigned char)(i * 7 + 3);
  CUdeviceptr memory = 0;
  ASSERT_TRUE(driver->check(api.memAlloc(&memory, in.size()), "cuMemAlloc", error)) << error;
  EXPECT_EQ(fake.allocated(), in.size());
  ASSERT_TRUE(driver->check(api.memcpyHtoD(memory, in.data(), in.size()), "cuMemcpyHtoD", error));
  ASSERT_TRUE(driver->check(api.memcpyDtoH(out.data(), memory, out.size()), "cuMemcpyDtoH", error));
  EXPECT_EQ(in, out);
  ASSERT_TRUE(driver->check(api.memFree(memory), "cuMemFree", error)) << error;
  EXPECT_EQ(fake.allocated(), 0u);
  EXPECT_STREQ(fake.log(), "cuInit(0)\ncuMemAlloc(1000)\ncuMemcpyHtoD(1000)\n"
                           "cuMemcpyDtoH(1000)\ncuMemFree\n");
}

TEST_P(FakeDriverTest, ErrorsNameTheCall) {
  ScopedEnv limit("TFC_FAKE_CUDA_ALLOC_LIMIT", "1048576");
  std::string error;
  std::unique_ptr<CudaDriver> driver = loadFake(GetParam(), error);
  ASSERT_TRUE(driver) << error;
  ASSERT_TRUE(driver->init(error)) << error;
  const DriverApi &api = driver->api();

  CUdeviceptr memory = 0;
  const size_t bytes = size_t(1288490189); // 1.2 GiB
  EXPECT_FALSE(driver->checkWith(api.memAlloc(&memory, bytes), error,
                                 [&] { return "cuMemAlloc(" + formatBytes(bytes) + ")"; }));
  EXPECT_EQ(error, "cuMemAlloc(1.2 GiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory");

  // A copy outside any allocation.
  std::vector<char> host(16);
  EXPECT_FALSE(driver->check(api.memcpyHtoD(CUdeviceptr(16), host.data(), host.size()),
                             "cuMemcpyHtoD(16 B)", error));
  EXPECT_EQ(error, "cuMemcpyHtoD(16 B): CUDA_ERROR_INVALID_VALUE: invalid argument");

  // A code the driver has no name for.
  EXPECT_EQ(driver->describe(CUresult(12345)), "CUresult 12345");
  EXPECT_TRUE(driver->check(CUDA_SUCCESS, "cuInit", error));
}

TEST_P(FakeDriverTest, DeviceOutOfRange) {
  std::string error;
  std::unique_ptr<CudaDriver> driver = loadFake(GetParam(), error);
  ASSERT_TRUE(driver) << error;
  ASSERT_TRUE(driver->init(error)) << error;
  CUdevice device = 0;
  EXPECT_FALSE(driver->device(3, device, error));
  EXPECT_EQ(error, "CUDA device 3 does not exist: the driver sees 1 device (index 0)");
  {
    ScopedEnv devices("TFC_FAKE_CUDA_DEVICES", "2");
    EXPECT_FALSE(driver->device(-1, device, error));
    EXPECT_EQ(error, "CUDA device -1 does not exist: the driver sees 2 devices (indices 0 to 1)");
    EXPECT_TRUE(driver->device(1, device, error)) << error;
    EXPECT_EQ(device, 1);
  }
  ScopedEnv none("TFC_FAKE_CUDA_DEVICES", "0");
  EXPECT_FALSE(driver->device(0, device, error));
  EXPECT_EQ(error, "CUDA device 0 does not exist: the driver sees 0 devices");
}

TEST_P(FakeDriverTest, InitFailures) {
  {
    ScopedEnv fail("TFC_FAKE_CUDA_INIT_ERROR", "100"); // CUDA_ERROR_NO_DEVICE
    std::string error;
    std::unique_ptr<CudaDriver> driver = loadFake(GetParam(), error);
    ASSERT_TRUE(driver) << error;
    EXPECT_FALSE(driver->init(error));
    EXPECT_EQ(error, "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected "
                     "(no GPU is visible: see nvidia-smi and CUDA_VISIBLE_DEVICES)");
    // The first answer stands.
    std::string again;
    EXPECT_FALSE(driver->init(again));
    EXPECT_EQ(again, error);
    EXPECT_FALSE(driver->initialized());
  }
  {
    ScopedEnv fail("TFC_FAKE_CUDA_INIT_ERROR", "803");
    std::string error;
    std::unique_ptr<CudaDriver> driver = loadFake(GetParam(), error);
    ASSERT_TRUE(driver) << error;
    EXPECT_FALSE(driver->init(error));
    EXPECT_EQ(error.rfind("cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: ", 0), 0u) << error;
    EXPECT_NE(error.find("kernel module"), std::string::npos) << error;
  }
  {
    ScopedEnv old("TFC_FAKE_CUDA_VERSION", "11080");
    std::string error;
    std::unique_ptr<CudaDriver> driver = loadFake(GetParam(), error);
    ASSERT_TRUE(driver) << error;
    EXPECT_FALSE(driver->init(error));
    EXPECT_EQ(error, std::string("the CUDA driver ") + GetParam() +
                         " is CUDA 11.8: tfc needs CUDA 12.0 or newer (update the NVIDIA driver)");
  }
}

TEST_P(FakeDriverTest, ContextModuleAndLaunch) {
  std::string error;
  std::unique_ptr<CudaDriver> driver = loadFake(GetParam(), error);
  ASSERT_TRUE(driver) << error;
  FakeControl fake(GetParam());
  fake.reset();
  {
    std::unique_ptr<CudaContext> context = CudaContext::open(*driver, 0, error);
    ASSERT_TRUE(context) << error;
    EXPECT_TRUE(driver->initialized());
    EXPECT_NE(context->stream(), nullptr);
    const DriverApi &api = driver->api();
    CUmodule module = nullptr;
    const char *ptx = ".visible .entry add_kernel(\n\t.param .u64 a\n)\n{ ret; }\n"
                      ".visible .entry scale_kernel()\n{ ret; }\n";
    ASSERT_TRUE(driver->check(api.moduleLoadData(&module, ptx), "cuModuleLoadData", error));
    CUfunction function = nullptr;
    ASSERT_TRUE(driver->check(api.moduleGetFunction(&function, module, "scale_kernel"),
                              "cuModuleGetFunction(scale_kernel)", error));
    EXPECT_FALSE(driver->check(api.moduleGetFunction(&function, module, "nope"),
                               "cuModuleGetFunction(nope)", error));
    EXPECT_EQ(error, "cuModuleGetFunction(nope): CUDA_ERROR_NOT_FOUND: named symbol not found");
    void *params[] = {nullptr};
    ASSERT_TRUE(driver->check(api.launchKernel(function, 4, 1, 1, 256, 1, 1, 0, context->stream(),
                                               params, nullptr),
                              "cuLaunchKernel(scale_kernel)", error));
    ASSERT_TRUE(driver->check(api.streamSynchronize(context->stream()), "cuStreamSynchronize",
                              error));
    ASSERT_TRUE(driver->check(api.moduleUnload(module), "cuModuleUnload", error));
  }
  EXPECT_STREQ(fake.log(), "cuInit(0)\n"
                           "cuDevicePrimaryCtxRetain(0)\n"
                           "cuCtxSetCurrent(0xc0)\n"
                           "cuStreamCreate(1)\n"
                           "cuModuleLoadData(add_kernel/1, scale_kernel/0)\n"
                           "cuModuleGetFunction(nope): not found\n"
                           "cuLaunchKernel(scale_kernel, grid 4x1x1, block 256x1x1, smem 0)\n"
                           "cuStreamSynchronize\n"
                           "cuModuleUnload\n"
                           "cuStreamDestroy\n"
                           "cuCtxSetCurrent(0x0)\n"
                           "cuDevicePrimaryCtxRelease(0)\n");
}

TEST_P(FakeDriverTest, ContextOnMissingDevice) {
  std::string error;
  std::unique_ptr<CudaDriver> driver = loadFake(GetParam(), error);
  ASSERT_TRUE(driver) << error;
  EXPECT_FALSE(CudaContext::open(*driver, 3, error));
  EXPECT_EQ(error, "CUDA device 3 does not exist: the driver sees 1 device (index 0)");
}

INSTANTIATE_TEST_SUITE_P(Resolvers, FakeDriverTest,
                         ::testing::Values(TFC_FAKE_CUDA_DRIVER, TFC_FAKE_CUDA_DRIVER_PLAIN),
                         [](const ::testing::TestParamInfo<const char *> &info) {
                           return std::string(info.index == 0 ? "GetProcAddress" : "Dlsym");
                         });

TEST(CudaDriverTest, ResolverUsed) {
  std::string error;
  std::unique_ptr<CudaDriver> driver = loadFake(TFC_FAKE_CUDA_DRIVER, error);
  ASSERT_TRUE(driver) << error;
  EXPECT_EQ(driver->resolver(), "cuGetProcAddress_v2");
  driver = loadFake(TFC_FAKE_CUDA_DRIVER_PLAIN, error);
  ASSERT_TRUE(driver) << error;
  EXPECT_EQ(driver->resolver(), "dlsym");
}

TEST(CudaDriverTest, MissingSymbolIsReported) {
  ScopedEnv missing("TFC_FAKE_CUDA_MISSING", "cuLaunchKernel");
  std::string error;
  std::unique_ptr<CudaDriver> driver = loadFake(TFC_FAKE_CUDA_DRIVER, error);
  ASSERT_FALSE(driver);
  EXPECT_EQ(error, std::string("the CUDA driver ") + TFC_FAKE_CUDA_DRIVER +
                       " has no cuLaunchKernel (looked up by cuGetProcAddress_v2): it is too old "
                       "or not NVIDIA's (it reports CUDA 13.0; tfc needs CUDA 12.0 or newer)");
}

//===- CudaDevice: runtime/Device.h on the fake driver ---------------------===//

namespace {
void *gSeenBuffers[2];
void recordingEntry(void **buffers) {
  gSeenBuffers[0] = buffers[0];
  gSeenBuffers[1] = buffers[1];
}
} // namespace

TEST(CudaDeviceTest, NoDriver) {
  ScopedEnv env("TFC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  std::string error;
  EXPECT_FALSE(CudaDevice::openIndex(0, error));
  EXPECT_EQ(error.rfind("no CUDA driver: tried /nonexistent/libcuda.so.1", 0), 0u) << error;
}

TEST(CudaDeviceTest, MemoryCopiesAndRun) {
  ScopedEnv env("TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER);
  std::string error;
  std::unique_ptr<CudaDevice> device = CudaDevice::openIndex(0, error);
  ASSERT_TRUE(device) << error;
  EXPECT_EQ(device->name(), "cuda:0");
  EXPECT_FALSE(device->hostMemory());

  std::vector<float> in = {1.5f, -2.0f, 3.25f, 1e-40f}, out(4, 0.0f);
  void *a = device->allocate(in.size() * sizeof(float));
  void *b = device->allocate(64);
  ASSERT_TRUE(a && b) << device->error();
  EXPECT_EQ(device->liveAllocations(), 2u);
  device->copyIn(a, in.data(), in.size() * sizeof(float));
  device->copyOut(out.data(), a, out.size() * sizeof(float));
  EXPECT_EQ(in, out);
  void *buffers[] = {a, b};
  ASSERT_TRUE(device->run(recordingEntry, buffers, 2, error)) << error;
  EXPECT_EQ(gSeenBuffers[0], a);
  EXPECT_EQ(gSeenBuffers[1], b);
  device->release(a);
  device->release(b);
  EXPECT_EQ(device->liveAllocations(), 0u);
  EXPECT_EQ(device->error(), "");
}

TEST(CudaDeviceTest, FailuresReachRun) {
  ScopedEnv env("TFC_CUDA_DRIVER", TFC_FAKE_CUDA_DRIVER);
  ScopedEnv limit("TFC_FAKE_CUDA_ALLOC_LIMIT", "1024");
  std::string error;
  std::unique_ptr<CudaDevice> device = CudaDevice::openIndex(0, error);
  ASSERT_TRUE(device) << error;
  EXPECT_EQ(device->allocate(size_t(2) << 20), nullptr);
  EXPECT_EQ(device->error(), "cuMemAlloc(2.0 MiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  // A copy past the end of an allocation fails too; the first failure stands.
  void *small = device->allocate(16);
  ASSERT_TRUE(small);
  char host[32] = {};
  device->copyIn(small, host, sizeof host);
  EXPECT_FALSE(device->run(recordingEntry, nullptr, 0, error));
  EXPECT_EQ(error, "cuMemAlloc(2.0 MiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  EXPECT_EQ(device->error(), "");
  device->copyOut(host, small, sizeof host);
  EXPECT_EQ(device->error(), "cuMemcpyDtoHAsync(32 B): CUDA_ERROR_INVALID_VALUE: invalid argument");
  device->release(small);
}

//===- The real driver, where there is one (skipped elsewhere) ------------===//

TEST(CudaRealDriverTest, RoundTripOnDevice0) {
  ScopedEnv env("TFC_CUDA_DRIVER", nullptr);
  std::string error;
  std::unique_ptr<CudaDevice> device = CudaDevice::openIndex(0, error);
  if (!device && error.rfind("no CUDA driver", 0) == 0)
    GTEST_SKIP() << error;
  ASSERT_TRUE(device) << error;
  CudaDriver &driver = device->driver();
  std::string name;
  size_t total = 0;
  int major = 0, minor = 0;
  ASSERT_TRUE(driver.deviceName(device->context().device(), name, error)) << error;
  ASSERT_TRUE(driver.deviceMemory(device->context().device(), total, error)) << error;
  ASSERT_TRUE(driver.computeCapability(device->context().device(), major, minor, error)) << error;
  std::printf("driver %s via %s, CUDA %d; %s, sm_%d%d, %s\n", driver.path().c_str(),
              driver.resolver().c_str(), driver.version(), name.c_str(), major, minor,
              formatBytes(total).c_str());
  std::vector<unsigned char> in(size_t(1) << 20), out(in.size(), 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = (unsigned char)(i * 131 + 7);
  void *memory = device->allocate(in.size());
  ASSERT_TRUE(memory) << device->error();
  device->copyIn(memory, in.data(), in.size());
  device->copyOut(out.data(), memory, out.size());
  device->release(memory);
  EXPECT_EQ(device->error(), "");
  EXPECT_EQ(in, out);
  // Errors from the real driver name the call.
  CUdeviceptr huge = 0;
  EXPECT_FALSE(driver.checkWith(driver.api().memAlloc(&huge, size_t(1) << 50), error,
                                [] { return "cuMemAlloc(1.0 PiB)"; }));
  EXPECT_EQ(error.rfind("cuMemAlloc(1.0 PiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory", 0), 0u)
      << error;
}
