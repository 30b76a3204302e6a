//===- CudaBinaryTest.cpp - a CUDA binary's command line, without a GPU ---===//
//
// A model linked with libtfc_runtime_cuda.a (CudaHandModel.cpp, written as
// tfc --target=cuda writes one) run as a user would: it needs nothing of
// CUDA to start (readelf: no libcuda, no libcublasLt); `info` and `init`
// work without a driver; every other command without one is one line and
// exit 1; against the fake driver and the fake cuBLASLt (tests/unit/Fake*)
// `predict` runs every launch through the fake's checks, its first batch
// eagerly, the second captured as a graph and the third replayed, and the
// GEMM's numbers are x @ w.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace tfc;
using namespace tfc::e2e;

namespace {

const std::string kBinary = TFC_CUDA_HAND_MODEL;
/// The fakes, and no runtime settings `tune` kept on this machine.
const std::string kFakes = std::string("TFC_CUDA_DRIVER=") + TFC_FAKE_CUDA_DRIVER +
                           " TFC_CUBLASLT=" + TFC_FAKE_CUBLASLT + " TFC_TUNE_CACHE=none ";
const std::string kNoDriver = "TFC_CUDA_DRIVER=/nonexistent/libcuda.so.1 ";
/// The fakes with every product on cuBLASLt (the default, said here: the
/// fake's computes them on the host; gemm_small.cu's kernels, which
/// TFC_SMALL_GEMM=1 chooses for small products, do not run on the fake).
const std::string kCublasLtFakes = kFakes + "TFC_SMALL_GEMM=0 ";

/// x: `samples` rows of 3, distinct small values.
std::string writeInput(const std::string &dir, int64_t samples) {
  rt::Tensor x(rt::DType::F32, {samples, 3});
  for (int64_t i = 0; i < samples * 3; ++i)
    x.f32()[i] = float((i * 7) % 11 - 5) / 4.0f;
  std::string path = dir + "/x.npy", error;
  EXPECT_TRUE(rt::writeNpy(path, x, error)) << error;
  return path;
}

} // namespace

TEST(CudaBinaryTest, NeedsNothingOfCuda) {
  CommandResult r = run("readelf -d " + kBinary);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("libcuda"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("libcublas"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("libcudart"), std::string::npos) << r.output;
  // Each NEEDED library is one a machine without CUDA has.
  for (size_t at = r.output.find("Shared library: ["); at != std::string::npos;
       at = r.output.find("Shared library: [", at + 1)) {
    size_t begin = at + 17, end = r.output.find(']', begin);
    std::string lib = r.output.substr(begin, end - begin);
    EXPECT_TRUE(lib.rfind("libstdc++", 0) == 0 || lib.rfind("libm.", 0) == 0 ||
                lib.rfind("libgcc_s", 0) == 0 || lib.rfind("libc.", 0) == 0 ||
                lib.rfind("ld-linux", 0) == 0)
        << lib;
  }
}

TEST(CudaBinaryTest, InfoAndInitWithoutADriver) {
  CommandResult r = run(kNoDriver + kBinary + " info");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("runs on device cuda:0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device:\n  cuda:0: none here: no CUDA driver: tried "
                          "/nonexistent/libcuda.so.1 (from TFC_CUDA_DRIVER)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("kernels 2, a ptx image compiled by the driver at load (PTX)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("cuBLASLt workspace 32.0 MiB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("predict: peak of intermediate buffers 256 bytes"), std::string::npos)
      << r.output;
  // --device shows in the name.
  r = run(kNoDriver + kBinary + " --device 3 info");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("runs on device cuda:3"), std::string::npos) << r.output;

  std::string dir = makeTempDir("cuda-init");
  r = run(kNoDriver + kBinary + " init --seed 3 --out " + dir + "/p.safetensors");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::pair<std::string, rt::Tensor>> params;
  std::string error;
  ASSERT_TRUE(rt::readSafetensors(dir + "/p.safetensors", params, error)) << error;
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].first, "w");
}

TEST(CudaBinaryTest, OtherCommandsWithoutADriverAreOneLine) {
  std::string dir = makeTempDir("cuda-nodriver");
  std::string x = writeInput(dir, 2);
  CommandResult r = run(kNoDriver + kBinary + " predict --input x=" + x + " --output-dir " + dir);
  EXPECT_EQ(r.status, 1) << r.output;
  // The device is opened before anything else is done (no note about parameters).
  EXPECT_EQ(r.output, "error: no CUDA driver: tried /nonexistent/libcuda.so.1 (from "
                      "TFC_CUDA_DRIVER); running on a GPU needs the NVIDIA driver "
                      "(libcuda.so.1)\n");
  r = run(kNoDriver + kBinary + " run predict --feed x=" + x + " --output-dir " + dir);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(countOf(r.output, "\n"), 1u) << r.output;
  EXPECT_NE(r.output.find("no CUDA driver"), std::string::npos) << r.output;
  // The default search, where this machine has no driver.
  r = run("env -u TFC_CUDA_DRIVER " + kBinary + " predict --input x=" + x + " --output-dir " + dir);
  if (r.status != 0 && r.output.find("no CUDA driver") != std::string::npos) {
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.output.find("error: no CUDA driver: tried libcuda.so.1, "
                            "/usr/local/nvidia/lib64/libcuda.so.1"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(countOf(r.output, "\n"), 1u) << r.output;
  }
  // No output was written.
  EXPECT_EQ(fileBytes(dir + "/y.npy"), "");
}

TEST(CudaBinaryTest, PredictOnTheFakesEagerCapturedReplayed) {
  std::string dir = makeTempDir("cuda-fake");
  std::string x = writeInput(dir, 6); // three batches of 2
  std::string log = dir + "/fake.log";
  CommandResult r = run(kCublasLtFakes + "TFC_FAKE_CUDA_LOG=" + log + " " + kBinary +
                        " predict --input x=" + x + " --output-dir " + dir);
  ASSERT_EQ(r.status, 0) << r.output;
  std::string calls = fileBytes(log);
  EXPECT_EQ(calls.find("INVALID"), std::string::npos) << calls;
  EXPECT_NE(calls.find("cuModuleLoadData(tfc_hand_touch/2, tfc_hand_mark/3)"), std::string::npos)
      << calls;
  // Batch 1 eager (2 launches, 1 GEMM), batch 2 captured (2 + 1), batch 3 replayed.
  EXPECT_EQ(countOf(calls, "cuLaunchKernel(tfc_hand_touch, grid 1x1x1, block 64x1x1, smem 0)"),
            2u)
      << calls;
  EXPECT_EQ(countOf(calls, "cuLaunchKernel(tfc_hand_mark, grid 2x1x1, block 4x1x1, smem 0)"), 2u)
      << calls;
  EXPECT_EQ(countOf(calls, "cuStreamEndCapture(3 nodes)"), 1u) << calls;
  EXPECT_EQ(countOf(calls, "cuGraphLaunch(3 nodes)"), 2u) << calls;
  EXPECT_EQ(countOf(calls, "cublasLtMatmul(4x2x3, batch 1, NN, beta 0)"), 2u) << calls;

  // y = x @ w for every batch, w drawn as `init --seed 0` draws it.
  r = run(kNoDriver + kBinary + " init --seed 0 --out " + dir + "/p.safetensors");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::pair<std::string, rt::Tensor>> params;
  rt::Tensor xs, y;
  std::string error;
  ASSERT_TRUE(rt::readSafetensors(dir + "/p.safetensors", params, error)) << error;
  ASSERT_TRUE(rt::readNpy(x, xs, error)) << error;
  ASSERT_TRUE(rt::readNpy(dir + "/y.npy", y, error)) << error;
  ASSERT_EQ(y.shape, (std::vector<int64_t>{6, 4}));
  const float *w = params[0].second.f32();
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      double want = 0;
      for (int64_t p = 0; p < 3; ++p)
        want += double(xs.f32()[i * 3 + p]) * w[p * 4 + j];
      EXPECT_NEAR(y.f32()[i * 4 + j], want, 1e-5 * (1 + std::fabs(want))) << i << ", " << j;
    }

  // --no-graph: every batch eager, the same numbers.
  std::string eager = dir + "/eager";
  std::string eagerLog = dir + "/eager.log";
  r = run(kCublasLtFakes + "TFC_FAKE_CUDA_LOG=" + eagerLog + " " + kBinary + " predict --no-graph --input x=" +
          x + " --output-dir " + eager);
  ASSERT_EQ(r.status, 0) << r.output;
  calls = fileBytes(eagerLog);
  EXPECT_EQ(countOf(calls, "cuStreamBeginCapture("), 0u) << calls;
  EXPECT_EQ(countOf(calls, "cublasLtMatmul("), 3u) << calls;
  EXPECT_EQ(fileBytes(eager + "/y.npy"), fileBytes(dir + "/y.npy"));
}

TEST(CudaBinaryTest, DeviceAndCublasLtErrors) {
  std::string dir = makeTempDir("cuda-errors");
  std::string x = writeInput(dir, 2);
  CommandResult r = run(kFakes + kBinary + " --device 1 predict --input x=" + x +
                        " --output-dir " + dir);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(r.output, "error: CUDA device 1 does not exist: the driver sees 1 device (index 0)\n");
  r = run(kNoDriver + kBinary + " init --out " + dir + "/p.safetensors");
  ASSERT_EQ(r.status, 0) << r.output;
  r = run(std::string("TFC_CUDA_DRIVER=") + TFC_FAKE_CUDA_DRIVER +
          " TFC_SMALL_GEMM=0 TFC_CUBLASLT=/nonexistent/libcublasLt.so.13 " + kBinary +
          " predict --params " + dir + "/p.safetensors --input x=" + x + " --output-dir " + dir);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(r.output, "error: tfc_cuda_sgemm(batch 1, 2x4x3, A lda 3, B ldb 4, C ldc 4): no "
                      "cuBLASLt: tried /nonexistent/libcublasLt.so.13 (from TFC_CUBLASLT); GEMMs "
                      "on the GPU need CUDA 13's libcublasLt.so.13 (set TFC_CUBLASLT to its "
                      "path)\n");
  // A product small enough for gemm_small.cu (TFC_SMALL_GEMM=1) needs no cuBLASLt.
  const std::string smallLog = dir + "/small.log";
  r = run(std::string("TFC_CUDA_DRIVER=") + TFC_FAKE_CUDA_DRIVER + " TFC_SMALL_GEMM=1 TFC_FAKE_CUDA_LOG=" +
          smallLog + " TFC_CUBLASLT=/nonexistent/libcublasLt.so.13 " + kBinary +
          " predict --params " + dir + "/p.safetensors --input x=" + x + " --output-dir " + dir);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(fileBytes(smallLog).find("INVALID"), std::string::npos) << fileBytes(smallLog);
  EXPECT_NE(fileBytes(smallLog).find("cuLaunchKernel(tfc_cuda_small_gemm_kernel, grid 1x1x1, "
                                     "block 256x1x1, smem 0)"),
            std::string::npos)
      << fileBytes(smallLog);
  r = run(kFakes + kBinary + " --device -1 info");
  EXPECT_EQ(r.status, 2) << r.output;
}
