//===- CudaCompiledTest.cpp - tfc --target=cuda's binaries, without a GPU --===//
//
// What CI can check of the compiler's CUDA path with the toolkit but no GPU
// (issue 26): every seed model's kernels assemble for sm_90 with no spills,
// no stack and no unresolved function, in a bounded number of registers and
// of kernels; a binary with the default fatbin needs nothing of CUDA to
// start and says in one line what is missing; and the host path of every
// entry runs on the fake driver and fake cuBLASLt (tests/unit/Fake*), whose
// log shows every launch accepted (kernel resolved, grid and block valid,
// every address inside a live allocation), each entry eager on its first
// call and captured as a graph on its second, every kernel of the
// manifest launched by some entry, and the hand-written attention and
// layer-norm kernels launched where the model has those layers. Kernels do not run on the fakes, so no
// number is checked here: tools/gpu/check.sh compares them on a GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/Manifest.h"
#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"
#include "tests/e2e/EmbeddedManifest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace tfc;
using namespace tfc::e2e;
using ValueKind = tfc::abi::ValueKind;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;
const std::string kToolkit = TFC_CUDA_TOOLKIT; // what CMake found ptxas in
/// The fakes, and no runtime settings `tune` kept on this machine.
const std::string kFakes = std::string("TFC_CUDA_DRIVER=") + TFC_FAKE_CUDA_DRIVER +
                           " TFC_CUBLASLT=" + TFC_FAKE_CUBLASLT + " TFC_TUNE_CACHE=none ";
const std::string kNoDriver = "TFC_CUDA_DRIVER=/nonexistent/libcuda.so.1 ";

/// Compiles models/MODEL.tf for CUDA with `flags` into DIR/OUT; its path.
std::string compileCuda(const std::string &dir, const std::string &model, const std::string &out,
                        const std::string &flags) {
  std::string path = dir + "/" + out;
  CommandResult r = run(kTfc + " compile " + kSource + "/models/" + model +
                        ".tf --target=cuda --cuda-path=" + kToolkit + " " + flags + " -o " + path);
  EXPECT_EQ(r.status, 0) << model << " " << flags << ": " << r.output;
  return path;
}

//===----------------------------------------------------------------------===//
// ptxas on every seed model's kernels
//===----------------------------------------------------------------------===//

// The most registers a kernel may use. Today's largest is 64 (set_anomaly's
// and encoder_decoder's widest fused loops; reverse 46, the Fleuret models
// 32): 72 leaves one allocation granule (8 registers a thread) for codegen
// drift. A kernel past it keeps more live values than any kernel today
// (another accumulator in registers, a loop unrolled) and costs occupancy
// (4 blocks of 256 threads fit an SM at 64, 3 at 72): look before raising it.
constexpr int kMaxRegisters = 72;

struct KernelCountCase {
  std::string model;
  int kernels; // its kernels once fills fold into reductions, small reductions split
               // (tf-split-reductions), independent neighbours merged, small ones
               // run as tails and one-block ones chained (tf-merge-launches)
};

class SeedModelPtx : public ::testing::TestWithParam<KernelCountCase> {};

// Each seed model's PTX assembles for sm_90 and sm_80 (what the fatbin ships
// SASS for): ptxas exits 0; no kernel spills or has a stack frame (a
// stack is local memory: slow, and a sign of an array the mapping failed to
// keep in registers); nothing is left for the driver to link (no .extern
// .func: exp, log, tanh are inline); and the number of kernels is that of
// today within a band. The count is a regression check, not a target: fewer
// kernels (better fusion) may lower the floor, more need a reason.
TEST_P(SeedModelPtx, AssemblesWithoutSpillsOrCalls) {
  const KernelCountCase &c = GetParam();
  std::string dir = makeTempDir("cuda-ptx-" + c.model);
  ASSERT_FALSE(dir.empty());
  std::string ptxPath = compileCuda(dir, c.model, c.model + ".ptx", "--emit=ptx");
  ASSERT_FALSE(testing::Test::HasFailure());
  std::string ptx = fileBytes(ptxPath);
  ASSERT_FALSE(ptx.empty());
  EXPECT_EQ(countOf(ptx, ".extern .func"), 0u) << "unresolved functions in " << c.model;
  size_t entries = countOf(ptx, ".visible .entry tfc_k");
  EXPECT_EQ(countOf(ptx, ".entry "), entries) << "a kernel not named tfc_kN";

  for (const char *arch : {"sm_90", "sm_80"}) {
    SCOPED_TRACE(arch);
    CommandResult r = run(kToolkit + "/bin/ptxas -arch=" + arch + " -v " + ptxPath + " -o " + dir +
                          "/" + c.model + "." + arch + ".cubin");
    ASSERT_EQ(r.status, 0) << r.output;
    size_t compiled = 0, properties = 0;
    int maxRegisters = 0;
    std::string kernel, widest;
    for (const std::string &line : linesOf(r.output)) {
      char name[256];
      unsigned stack, spillStores, spillLoads;
      int registers;
      if (std::sscanf(line.c_str(), "ptxas info : Compiling entry function '%255[^']'", name) ==
          1) {
        kernel = name;
        ++compiled;
      } else if (std::sscanf(line.c_str(),
                             " %u bytes stack frame, %u bytes spill stores, %u bytes spill loads",
                             &stack, &spillStores, &spillLoads) == 3) {
        ++properties;
        EXPECT_EQ(stack, 0u) << c.model << " " << kernel << ": " << line;
        EXPECT_EQ(spillStores + spillLoads, 0u) << c.model << " " << kernel << ": " << line;
      } else if (std::sscanf(line.c_str(), "ptxas info : Used %d registers", &registers) == 1) {
        if (registers > maxRegisters) {
          maxRegisters = registers;
          widest = kernel;
        }
        EXPECT_LE(registers, kMaxRegisters) << c.model << " " << kernel << ": " << line;
      }
    }
    // Every kernel was assembled and reported on.
    EXPECT_EQ(compiled, entries) << r.output.substr(0, 2000);
    EXPECT_EQ(properties, entries);
    std::printf("  %s (%s): %zu kernels, at most %d registers (%s)\n", c.model.c_str(), arch,
                entries, maxRegisters, widest.c_str());
  }
  EXPECT_GE(entries, size_t(c.kernels * 8 / 10)) << c.model;
  EXPECT_LE(entries, size_t(c.kernels * 11 / 10)) << c.model;
}

INSTANTIATE_TEST_SUITE_P(Models, SeedModelPtx,
                         // Every entry's kernels: predict, evaluate, train_step, and
                         // data-parallel training's grad_step and apply_step (issue 27),
                         // adjacent independent ones merged (tf-merge-launches), bias
                         // gradients in their weight gradients' GEMM calls (BGRADB),
                         // the updates sunk to the step's end and merged (tf-group-loops),
                         // up to 32 KiB of kernel parameters a launch (PTX ISA 8.1), the
                         // loss and its gradient one call, adjacent one-block launches
                         // chained into one block (tf-merge-launches; 36, 82, 158, 156,
                         // 118 before), the input layer a lookup and the output net's
                         // ReLU and its gradient in the layer-norm kernels (reverse 31
                         // before), small launches run as the tail of the launch before
                         // them by its last block (tf-merge-launches; 23, 76, 155, 153,
                         // 106 before; set_anomaly's predict and evaluate have a ReLU
                         // after a layer norm too), the post-norm layers' dropout
                         // gradients stored by the layer norm backward's kernel
                         // (set_anomaly's 8 in train_step and grad_step: 65 before),
                         // and their residual sums made by the layer norm forward's
                         // (set_anomaly's 8 a step, encoder_decoder's 10: 51 and 90
                         // before).
                         ::testing::Values(KernelCountCase{"reverse", 15},
                                           KernelCountCase{"set_anomaly", 35},
                                           KernelCountCase{"fleuret_cnn", 124},
                                           KernelCountCase{"fleuret_attention", 130},
                                           KernelCountCase{"encoder_decoder", 68}),
                         [](const ::testing::TestParamInfo<KernelCountCase> &info) {
                           return info.param.model;
                         });

//===----------------------------------------------------------------------===//
// A fatbin binary on a machine without a GPU
//===----------------------------------------------------------------------===//

// The default build (SASS for sm_80 and sm_90, PTX for newer GPUs) links
// nothing of CUDA: the driver and cuBLASLt are opened when a command needs
// the GPU. `info` and `init` work without a driver; predict and train say in
// one line what is missing and exit 1.
TEST(CudaCompiled, FatbinBinaryStartsWithoutCuda) {
  std::string dir = makeTempDir("cuda-fatbin");
  ASSERT_FALSE(dir.empty());
  std::string binary = compileCuda(dir, "reverse", "reverse", "--batch 4");
  ASSERT_FALSE(testing::Test::HasFailure());

  CommandResult r = run("readelf -d " + binary);
  ASSERT_EQ(r.status, 0) << r.output;
  size_t needed = 0;
  for (size_t at = r.output.find("Shared library: ["); at != std::string::npos;
       at = r.output.find("Shared library: [", at + 1)) {
    size_t begin = at + 17, end = r.output.find(']', begin);
    std::string lib = r.output.substr(begin, end - begin);
    ++needed;
    EXPECT_TRUE(lib.rfind("libstdc++", 0) == 0 || lib.rfind("libm.", 0) == 0 ||
                lib.rfind("libgcc_s", 0) == 0 || lib.rfind("libc.", 0) == 0 ||
                lib.rfind("ld-linux", 0) == 0)
        << lib;
  }
  EXPECT_GT(needed, 0u) << r.output;

  r = run(kNoDriver + binary + " info");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("runs on device cuda:0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cuda:0: none here: no CUDA driver: tried /nonexistent/libcuda.so.1"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("a fatbin image with SASS for sm_80, sm_90"), std::string::npos)
      << r.output;

  r = run(kNoDriver + binary + " init --seed 1 --out " + dir + "/p.safetensors");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::pair<std::string, rt::Tensor>> params;
  std::string error;
  ASSERT_TRUE(rt::readSafetensors(dir + "/p.safetensors", params, error)) << error;
  EXPECT_FALSE(params.empty());

  // predict and train: exit 1, one line that names the missing driver.
  rt::Tensor tokens(rt::DType::I32, {4, 16});
  for (int64_t e = 0; e < tokens.numel(); ++e)
    tokens.i32()[e] = int32_t(e % 10);
  ASSERT_TRUE(rt::writeNpy(dir + "/tokens.npy", tokens, error)) << error;
  for (const std::string &command :
       {" predict --input tokens=" + dir + "/tokens.npy --output-dir " + dir + "/out",
        " train --epochs 1 --run-dir " + dir + "/run"}) {
    r = run(kNoDriver + binary + command);
    EXPECT_EQ(r.status, 1) << command << ": " << r.output;
    EXPECT_EQ(countOf(r.output, "\n"), 1u) << command << ": " << r.output;
    EXPECT_EQ(r.output.rfind("error: no CUDA driver: tried /nonexistent/libcuda.so.1", 0), 0u)
        << command << ": " << r.output;
  }
  EXPECT_EQ(fileBytes(dir + "/out/logits.npy"), "");
}

//===----------------------------------------------------------------------===//
// The host path of every entry on the fake driver
//===----------------------------------------------------------------------===//

/// Random values of `spec`'s type, valid for what it is: integers below the
/// input's index bound (10 where it has none: a class or token of every seed
/// model), Adam's second moments positive, the step counter 5, lr 1e-3.
rt::Tensor feedFor(const rt::TensorSpec &spec, std::vector<int64_t> shape, std::mt19937 &rng) {
  rt::Tensor t(spec.dtype, std::move(shape));
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_real_distribution<float> uniform(0.f, 1.f);
  int64_t bound = spec.indexBound > 0 ? spec.indexBound : 10;
  bool secondMoment = spec.name.size() > 10 && spec.name.substr(spec.name.size() - 10) == "exp_avg_sq";
  for (int64_t e = 0; e < t.numel(); ++e) {
    if (t.dtype == rt::DType::I32)
      t.i32()[e] = int32_t(uniform(rng) * float(bound)) % int32_t(bound);
    else if (t.dtype == rt::DType::Bool)
      t.bytes[size_t(e)] = uniform(rng) < 0.7f;
    else if (spec.kind == ValueKind::State)
      t.f32()[e] = secondMoment ? 1e-6f + 1e-4f * uniform(rng) : 1e-3f * normal(rng);
    else if (spec.kind == ValueKind::Mask)
      t.f32()[e] = 1;
    else
      t.f32()[e] = normal(rng);
  }
  if (spec.kind == ValueKind::Step)
    t.f32()[0] = 5;
  else if (spec.kind == ValueKind::Hyper && spec.name == "lr")
    t.f32()[0] = 1e-3f;
  else if (spec.kind == ValueKind::Hyper && spec.name == "total_steps")
    t.f32()[0] = 100;
  else if (spec.kind == ValueKind::Seed)
    t.i32()[0] = 3;
  return t;
}

/// What the fake's log says of one process: its launches, eager and
/// captured, the kernels they named, the GEMMs, the graphs.
struct FakeLog {
  std::string text;
  size_t eager = 0, captured = 0, gemms = 0, captures = 0, cooperative = 0;
  std::set<std::string> programmatic;               // kernels launched so (TFC_DEPENDENT_LAUNCH=1)
  std::vector<size_t> capturedNodes, replayedNodes; // cuStreamEndCapture, cuGraphLaunch
  std::set<std::string> launched;
  std::map<std::string, std::set<std::string>> blocks; // a kernel's "128x1x1", ...

  explicit FakeLog(const std::string &path) : text(fileBytes(path)) {
    for (const std::string &line : linesOf(text)) {
      size_t nodes;
      char name[64], block[32];
      // cuLaunchKernelEx: a persistent kernel's cooperative launch.
      const bool ex = std::sscanf(line.c_str(), "cuLaunchKernelEx(%63[^,]", name) == 1;
      if (ex || std::sscanf(line.c_str(), "cuLaunchKernel(%63[^,]", name) == 1) {
        launched.insert(name);
        if (ex && line.find(", cooperative)") != std::string::npos)
          ++cooperative;
        if (ex && line.find(", programmatic)") != std::string::npos)
          programmatic.insert(name);
        if (size_t at = line.find(", block "); at != std::string::npos &&
                                                std::sscanf(line.c_str() + at, ", block %31[0-9x]",
                                                            block) == 1)
          blocks[name].insert(block);
        bool inGraph = line.size() > 9 && line.substr(line.size() - 9) == " captured";
        ++(inGraph ? captured : eager);
      } else if (line.rfind("cublasLtMatmul(", 0) == 0) {
        ++gemms;
      } else if (line.rfind("cuStreamBeginCapture(", 0) == 0) {
        ++captures;
      } else if (std::sscanf(line.c_str(), "cuStreamEndCapture(%zu nodes)", &nodes) == 1) {
        capturedNodes.push_back(nodes);
      } else if (std::sscanf(line.c_str(), "cuGraphLaunch(%zu nodes)", &nodes) == 1) {
        replayedNodes.push_back(nodes);
      }
    }
  }
};

/// The hand-written kernels tfc_cuda_attention_forward/_backward,
/// tfc_cuda_layer_norm_forward/_backward and tfc_cuda_cross_entropy/_backward/
/// _fused launch (runtime/cuda/LayerKernels.cpp; the fake reads their fatbins'
/// ELF), and the block each must have (runtime/cuda/kernels/Kernels.h).
const std::map<std::string, std::string> kHandKernels = {
    {"tfc_cuda_attention_forward_kernel", "256x1x1"},
    {"tfc_cuda_attention_backward_dq_kernel", "256x1x1"},
    {"tfc_cuda_attention_backward_dkv_kernel", "256x1x1"},
    {"tfc_cuda_layer_norm_backward_kernel", "256x1x1"},
    {"tfc_cuda_layer_norm_backward_reduce_kernel", "256x1x1"},
    {"tfc_cuda_layer_norm_forward_kernel", "256x1x1"},
    {"tfc_cuda_cross_entropy_forward_kernel", "256x1x1"},
    {"tfc_cuda_cross_entropy_mean_kernel", "256x1x1"},
    {"tfc_cuda_cross_entropy_backward_kernel", "256x1x1"},
    {"tfc_cuda_cross_entropy_fused_kernel", "256x1x1"},
    {"tfc_cuda_small_gemm_kernel", "256x1x1"},
    {"tfc_cuda_small_gemm_finish_kernel", "256x1x1"},
    {"tfc_cuda_column_sums_kernel", "256x1x1"},
};
/// The hand-written kernels a seed model's entries launch: attention's and
/// the layer norm's in the transformers (the backward one launch, its last
/// block adding the row blocks' partials: at batch 4 they are few, and no
/// reduce kernel runs), the cross-entropy's where it is the
/// loss: train_step and grad_step have the loss and its gradient as one call
/// (the fused kernel, its last block adding the losses: no mean kernel), so
/// neither the forward kernel nor the backward is launched
/// (--no-fused-cross-entropy launches them:
/// CrossEntropyLossAndGradientReadTheLogitsOnce); evaluate's loss, a masked
/// mean, is generated code.
std::set<std::string> handKernelsOf(const std::string &model) {
  if (model == "fleuret_cnn")
    return {};
  std::set<std::string> kernels;
  for (const auto &[kernel, block] : kHandKernels)
    if (kernel.find("cross_entropy") == std::string::npos &&
        kernel.find("gemm") == std::string::npos &&
        kernel.find("column_sums") == std::string::npos &&
        kernel != "tfc_cuda_layer_norm_backward_reduce_kernel")
      kernels.insert(kernel);
  if (model == "reverse" || model == "set_anomaly")
    kernels.insert("tfc_cuda_cross_entropy_fused_kernel");
  // At batch 4 some products are tiny (at most kSmallGemmDefaultWork
  // multiply-adds): gemm_small.cu's by default.
  if (model == "reverse" || model == "set_anomaly" || model == "encoder_decoder")
    kernels.insert("tfc_cuda_small_gemm_kernel");
  return kernels;
}

/// gemm_small.cu's kernels a seed model's train_step, grad_step and
/// apply_step launch with TFC_SMALL_GEMM=1: its linear layers' products,
/// all small at batch 4, each one launch of the product kernel: the weight
/// gradients' bias gradients are column-sum units of it, and set_anomaly's
/// longest K goes in slices its last block adds (no column-sums or finish
/// kernel).
std::set<std::string> smallGemmKernelsOf(const std::string &model) {
  if (model != "reverse" && model != "set_anomaly" && model != "encoder_decoder")
    return {};
  return {"tfc_cuda_small_gemm_kernel"};
}

/// A seed model compiled with a PTX image (the fake loads no SASS), batch 4.
class OnFakes : public ::testing::Test {
protected:
  /// `model` of models/, or the .tf file `source` when given.
  void compile(const std::string &model, const std::string &flags = "",
               const std::string &source = "") {
    dir_ = makeTempDir("cuda-fake-" + model);
    ASSERT_FALSE(dir_.empty());
    if (source.empty()) {
      binary_ = compileCuda(dir_, model, "model", "--cuda-image=ptx --batch 4 " + flags);
    } else {
      binary_ = dir_ + "/model";
      CommandResult r = run(kTfc + " compile " + source + " --target=cuda --cuda-path=" +
                            kToolkit + " --cuda-image=ptx " + flags + " -o " + binary_);
      ASSERT_EQ(r.status, 0) << r.output;
    }
    ASSERT_FALSE(testing::Test::HasFailure());
    std::string error;
    ASSERT_TRUE(readManifest(binary_, manifest_, error)) << error;
    ASSERT_EQ(manifest_.device, "cuda");
    ASSERT_TRUE(manifest_.cuda.has_value());
    ASSERT_EQ(manifest_.cuda->image, "ptx");
    ASSERT_FALSE(manifest_.cuda->kernels.empty());
  }

  /// Runs `command` of the binary on the fakes; the fake's log of it.
  FakeLog runOnFakes(const std::string &name, const std::string &command) {
    std::string log = dir_ + "/" + name + ".log";
    CommandResult r =
        run(kFakes + env_ + "TFC_FAKE_CUDA_LOG=" + log + " " + binary_ + " " + command);
    EXPECT_EQ(r.status, 0) << name << ": " << r.output;
    FakeLog parsed(log);
    EXPECT_FALSE(parsed.text.empty()) << name << ": no log";
    // Every call the fake checks was accepted.
    EXPECT_EQ(parsed.text.find("INVALID"), std::string::npos) << name << ":\n" << parsed.text;
    EXPECT_EQ(parsed.text.find("not found"), std::string::npos) << name << ":\n" << parsed.text;
    // The image loaded holds every kernel of the manifest.
    const std::string loaded = lineWith(parsed.text, "cuModuleLoadData(");
    EXPECT_NE(loaded, "") << name;
    for (const std::string &k : manifest_.cuda->kernels)
      EXPECT_NE(loaded.find(k + "/"), std::string::npos) << name << ": " << k << " not loaded";
    return parsed;
  }

  /// Random samples of every input in dir_/data's train (12), val (4) and
  /// test (4) splits.
  void writeSplits() {
    std::mt19937 rng(9);
    std::string error;
    for (auto [split, n] : {std::pair{"train", 12}, std::pair{"val", 4}, std::pair{"test", 4}}) {
      ASSERT_EQ(run("mkdir -p " + dir_ + "/data/" + split).status, 0);
      for (const rt::TensorSpec &input : manifest_.inputs) {
        std::vector<int64_t> shape = input.shape;
        shape[0] = n;
        rt::TensorSpec spec = input;
        spec.kind = ValueKind::Input;
        ASSERT_TRUE(rt::writeNpy(dir_ + "/data/" + split + "/" + input.name + ".npy",
                                 feedFor(spec, shape, rng), error))
            << error;
      }
    }
  }

  /// `run ENTRY` fed random values of every non-parameter argument.
  FakeLog runEntry(const std::string &entryName) {
    const rt::EntrySpec *entry = manifest_.entry(entryName);
    EXPECT_NE(entry, nullptr) << entryName;
    if (!entry)
      return FakeLog("");
    std::mt19937 rng(17);
    std::string feeds, error;
    for (const rt::TensorSpec &arg : entry->args) {
      if (arg.kind == ValueKind::Param)
        continue;
      const rt::TensorSpec *input = manifest_.input(arg.name);
      rt::TensorSpec spec = arg.kind == ValueKind::Input && input ? *input : arg;
      spec.kind = arg.kind;
      std::string path = dir_ + "/" + entryName + "." + std::string(tfc::abi::kindName(arg.kind)) +
                         "." + arg.name + ".npy";
      EXPECT_TRUE(rt::writeNpy(path, feedFor(spec, arg.shape, rng), error)) << error;
      feeds += " --feed " + arg.feedKey() + "=" + path;
    }
    FakeLog log = runOnFakes("run-" + entryName, "run " + entryName + feeds + " --output-dir " +
                                                     dir_ + "/out-" + entryName);
    // One call: every launch eager, none captured.
    EXPECT_GT(log.eager, 0u) << entryName;
    EXPECT_EQ(log.captured, 0u) << entryName;
    EXPECT_EQ(log.captures, 0u) << entryName;
    for (const rt::TensorSpec &result : entry->results)
      EXPECT_NE(fileBytes(dir_ + "/out-" + entryName + "/" + std::string(tfc::abi::kindName(result.kind)) +
                          "." + result.name + ".npy"),
                "")
          << entryName << ": " << result.feedKey();
    return log;
  }

  std::string dir_, binary_;
  /// Environment runOnFakes adds ("TFC_SMALL_GEMM=1 ": small products on
  /// gemm_small.cu; "TFC_SMALL_GEMM=0 ", the default: all on cuBLASLt).
  std::string env_;
  rt::Manifest manifest_;
};

// predict over three batches: the first eager, the second captured as a
// CUDA graph (the same launches, and the same GEMMs, as nodes) and launched,
// the third a replay of that graph; every launch accepted by the fake.
// `run train_step`, `run evaluate`, `run grad_step` and `run apply_step` once
// each; between them the entries launch every kernel of the manifest (entries have no host control
// flow: a kernel no entry launches would be dead weight in the image), and
// the transformers' attention and layer-norm backward launch the
// hand-written kernels (from their fatbins, on their fixed blocks, every
// pointer inside an allocation, captured with the rest).
class SeedModelOnFakes : public OnFakes, public ::testing::WithParamInterface<std::string> {};

TEST_P(SeedModelOnFakes, EveryEntryLaunchesValidly) {
  ASSERT_NO_FATAL_FAILURE(compile(GetParam()));
  const int64_t batch = manifest_.batch, samples = 3 * batch;
  ASSERT_EQ(batch, 4);
  std::mt19937 rng(5);
  std::string inputs, error;
  for (const rt::TensorSpec &input : manifest_.inputs) {
    const rt::EntrySpec *predict = manifest_.entry("predict");
    ASSERT_NE(predict, nullptr);
    bool read = std::any_of(predict->args.begin(), predict->args.end(),
                            [&](const rt::TensorSpec &a) { return a.name == input.name; });
    if (!read)
      continue;
    std::vector<int64_t> shape = input.shape;
    shape[0] = samples;
    rt::TensorSpec spec = input;
    spec.kind = ValueKind::Input;
    std::string path = dir_ + "/" + input.name + ".npy";
    ASSERT_TRUE(rt::writeNpy(path, feedFor(spec, shape, rng), error)) << error;
    inputs += " --input " + input.name + "=" + path;
  }
  FakeLog predict = runOnFakes("predict", "predict" + inputs + " --output-dir " + dir_ + "/out");
  EXPECT_GT(predict.eager, 0u);
  EXPECT_EQ(predict.captured, predict.eager) << "the captured call launched other kernels";
  EXPECT_EQ(predict.captures, 1u);
  ASSERT_EQ(predict.capturedNodes.size(), 1u) << predict.text;
  // The graph: the second call's launches and GEMMs (a GEMM is logged when
  // run eagerly and when captured, not when replayed).
  EXPECT_EQ(predict.gemms % 2, 0u);
  EXPECT_EQ(predict.capturedNodes[0], predict.captured + predict.gemms / 2);
  // Launched after the capture, then replayed for the third batch.
  EXPECT_EQ(predict.replayedNodes, std::vector<size_t>(2, predict.capturedNodes[0]));
  const rt::EntrySpec *predictEntry = manifest_.entry("predict");
  for (const rt::TensorSpec &result : predictEntry->results) {
    if (result.kind != ValueKind::Output)
      continue;
    rt::Tensor out;
    ASSERT_TRUE(rt::readNpy(dir_ + "/out/" + result.name + ".npy", out, error)) << error;
    ASSERT_FALSE(out.shape.empty());
    EXPECT_EQ(out.shape[0], samples) << result.name;
  }

  FakeLog step = runEntry("train_step");
  FakeLog evaluate = runEntry("evaluate");
  // Its scores (a scalar each) come out in one copy and one wait, not one a
  // score (Model::run).
  if (manifest_.entry("evaluate")->results.size() > 1)
    EXPECT_EQ(countOf(evaluate.text, "cuMemcpyDtoH("), 1u) << evaluate.text;
  // Data-parallel training's two halves of the step (runtime/StepFeeds.h).
  FakeLog grad = runEntry("grad_step");
  FakeLog apply = runEntry("apply_step");
  std::set<std::string> launched, handLaunched;
  for (const FakeLog *log : {&predict, &step, &evaluate, &grad, &apply})
    for (const std::string &kernel : log->launched) {
      if (!kHandKernels.count(kernel)) {
        launched.insert(kernel);
        continue;
      }
      // A hand-written kernel: the runtime's launch, on its fixed block.
      handLaunched.insert(kernel);
      EXPECT_EQ(log->blocks.at(kernel), std::set<std::string>{kHandKernels.at(kernel)})
          << kernel;
    }
  std::set<std::string> manifestKernels(manifest_.cuda->kernels.begin(),
                                        manifest_.cuda->kernels.end());
  EXPECT_EQ(launched, manifestKernels);
  // Attention, the layer norm and the cross-entropy call the hand-written
  // kernels (predict the forward, train_step the backward too), none else does.
  EXPECT_EQ(handLaunched, handKernelsOf(GetParam()));
  if (GetParam() != "fleuret_cnn") {
    EXPECT_TRUE(predict.launched.count("tfc_cuda_attention_forward_kernel"));
    EXPECT_TRUE(predict.launched.count("tfc_cuda_layer_norm_forward_kernel"));
    EXPECT_TRUE(step.launched.count("tfc_cuda_attention_backward_dkv_kernel"));
    EXPECT_TRUE(step.launched.count("tfc_cuda_layer_norm_backward_kernel"));
    EXPECT_FALSE(step.launched.count("tfc_cuda_layer_norm_backward_reduce_kernel"));
  }
  std::printf("  %s: %zu kernels; launches a call: predict %zu, train_step %zu, evaluate %zu, "
              "grad_step %zu, apply_step %zu\n",
              GetParam().c_str(), manifestKernels.size(), predict.eager, step.eager,
              evaluate.eager, grad.eager, apply.eager);
}

// TFC_SMALL_GEMM=1: the products on gemm_small.cu's kernels, none on
// cuBLASLt; every launch accepted, on its fixed block.
TEST_P(SeedModelOnFakes, SmallGemmsLaunchValidly) {
  ASSERT_NO_FATAL_FAILURE(compile(GetParam()));
  env_ = "TFC_SMALL_GEMM=1 ";
  std::set<std::string> small;
  for (const char *entry : {"train_step", "grad_step", "apply_step"}) {
    FakeLog log = runEntry(entry);
    EXPECT_EQ(log.gemms, 0u) << entry << ": a product on cuBLASLt";
    for (const std::string &kernel : log.launched)
      if (kernel.find("gemm") != std::string::npos || kernel.find("column_sums") != std::string::npos) {
        small.insert(kernel);
        EXPECT_EQ(log.blocks.at(kernel), std::set<std::string>{"256x1x1"}) << kernel;
      }
  }
  EXPECT_EQ(small, smallGemmKernelsOf(GetParam()));
}

// TFC_BGRAD_COLUMNS=1: reverse's weight gradients as plain cuBLASLt products
// (no BGRADA/BGRADB epilogue) and beside each its bias gradient by
// gemm_small.cu's column sums (K 64 at batch 4: one part, no finish), as
// many GEMMs as with the epilogue and a column-sums launch for each
// epilogue, every launch accepted on its fixed block. (The fake runs the
// column sums; CudaRuntimeTest compares their sums. A step's results here
// depend on the layers' kernels, which the fake does not run.)
TEST_F(OnFakes, BiasGradientsByColumnSumsUnderTfcBgradColumns) {
  ASSERT_NO_FATAL_FAILURE(compile("reverse"));
  env_ = "TFC_BGRAD_COLUMNS=0 ";
  FakeLog epilogues = runEntry("train_step");
  const size_t biasGrads = countOf(epilogues.text, ", bgrad");
  EXPECT_GT(biasGrads, 0u) << epilogues.text;
  EXPECT_FALSE(epilogues.launched.count("tfc_cuda_column_sums_kernel"));
  env_ = "TFC_BGRAD_COLUMNS=1 ";
  std::remove((dir_ + "/run-train_step.log").c_str()); // the fake appends to it
  FakeLog columns = runEntry("train_step");
  EXPECT_EQ(countOf(columns.text, ", bgrad"), 0u) << columns.text;
  EXPECT_EQ(columns.gemms, epilogues.gemms);
  EXPECT_EQ(countOf(columns.text, "cuLaunchKernel(tfc_cuda_column_sums_kernel, "), biasGrads)
      << columns.text;
  EXPECT_FALSE(columns.launched.count("tfc_cuda_small_gemm_finish_kernel"));
  ASSERT_TRUE(columns.blocks.count("tfc_cuda_column_sums_kernel"));
  EXPECT_EQ(columns.blocks.at("tfc_cuda_column_sums_kernel"), std::set<std::string>{"256x1x1"});
}

// `tune` on the fakes (whose times mean nothing: what is checked is the
// procedure): it starts from the defaults, tries each other value of each
// setting the step's calls depend on (reverse's fp32 attention takes no
// tensor-core kernel: the attention kernels' switches are skipped), with
// every launch accepted, and keeps one line for this model and GPU. A
// later run applies the line's settings where they change something and
// says so (bench, train, and the bias gradients' column sums launched),
// unless TFC_TUNED=0; a setting's variable wins over it; a line of another
// model or GPU is not applied.
TEST_F(OnFakes, TuneChoosesAndLaterRunsApplyTheChoice) {
  ASSERT_NO_FATAL_FAILURE(compile("reverse"));
  const std::string cache = dir_ + "/tuned-settings.txt";
  env_ = "TFC_TUNE_CACHE=" + cache + " TFC_SMALL_GEMM=0 ";
  auto runWith = [&](const std::string &env, const std::string &command) {
    CommandResult r = run(kFakes + "TFC_TUNE_CACHE=" + cache + " " + env + binary_ + " " + command);
    EXPECT_EQ(r.status, 0) << command << ": " << r.output;
    return r.output;
  };
  FakeLog tuned = runOnFakes("tune", "tune --steps 2 --warmup 2");
  EXPECT_GT(tuned.captured, 0u);
  const std::string output =
      runWith("TFC_SMALL_GEMM=0 ", "tune --steps 1 --warmup 1 --threshold 0.5");
  EXPECT_NE(output.find("tune model=reverse entry=train_step device=cuda:0 steps=1 warmup=1"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("tune defaults median_ms="), std::string::npos) << output;
  EXPECT_NE(output.find("tune fixed TFC_SMALL_GEMM=0: set by the environment"), std::string::npos)
      << output;
  for (const char *tried :
       {"TFC_BGRAD_COLUMNS=1", "TFC_LAYER_NORM_ONE_LAUNCH=0", "TFC_CROSS_ENTROPY_ONE_LAUNCH=0",
        "TFC_ATTENTION_SAVED_STATS=0", "TFC_ATTENTION_DS=0", "TFC_ATTENTION_DQ_STORES_D=0",
        "TFC_GRAPH_DEPENDENCIES=1", "TFC_GEMM_AUTOTUNE=1"})
    EXPECT_NE(output.find(std::string("tune try ") + tried + " median_ms="), std::string::npos)
        << tried << "\n"
        << output;
  for (const char *skipped : {"TFC_ATTENTION_LEAN", "TFC_ATTENTION_WGMMA", "TFC_ATTENTION_WIDE"})
    EXPECT_NE(output.find(std::string("tune skip ") + skipped + ": "), std::string::npos)
        << skipped << "\n"
        << output;
  EXPECT_EQ(output.find(": failed: "), std::string::npos) << output;
  EXPECT_EQ(output.find("results differ"), std::string::npos) << output;
  EXPECT_NE(output.find("tune chose median_ms="), std::string::npos) << output;
  EXPECT_NE(output.find("tune kept in " + cache), std::string::npos) << output;
  // One line for this model on this GPU, tuned twice: replaced, not added.
  const std::vector<std::string> lines = linesOf(fileBytes(cache));
  ASSERT_EQ(lines.size(), 1u) << fileBytes(cache);
  const size_t tab = lines[0].find('\t');
  ASSERT_NE(tab, std::string::npos) << lines[0];
  const std::string key = lines[0].substr(0, tab);
  EXPECT_EQ(key.rfind("model reverse ", 0), 0u) << key;
  EXPECT_NE(key.find(", Fake CUDA Device 0, sm_90, 132 SMs, driver "), std::string::npos) << key;
  EXPECT_NE(lines[0].find("\tTFC_SMALL_GEMM=0 TFC_BGRAD_COLUMNS="), std::string::npos) << lines[0];

  // A choice of our own for the same key: the bias gradients by column sums.
  auto keep = [&](const std::string &line) {
    std::FILE *file = std::fopen(cache.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs((line + "\n").c_str(), file);
    std::fclose(file);
  };
  keep(key + "\tTFC_SMALL_GEMM=0 TFC_BGRAD_COLUMNS=1 TFC_LAYER_NORM_ONE_LAUNCH=1");
  // info lists it (what it changes) without opening the device.
  EXPECT_NE(runWith("", "info")
                .find("tuned for " + key.substr(key.find(", ") + 2) +
                      ": TFC_SMALL_GEMM=0 TFC_BGRAD_COLUMNS=1\n"),
            std::string::npos)
      << runWith("", "info");
  env_ = "TFC_TUNE_CACHE=" + cache + " ";
  auto bench = [&](const std::string &env) {
    std::remove((dir_ + "/bench.log").c_str()); // the fake appends to it
    env_ = "TFC_TUNE_CACHE=" + cache + " " + env;
    return runOnFakes("bench", "bench --entry train_step --steps 1 --warmup 1");
  };
  const std::string tunedLine =
      "bench device settings tune chose for this GPU (TFC_TUNED=0: not): ";
  EXPECT_TRUE(bench("").launched.count("tfc_cuda_column_sums_kernel"));
  EXPECT_NE(runWith("", "bench --entry train_step --steps 1 --warmup 1")
                .find(tunedLine + "TFC_SMALL_GEMM=0 TFC_BGRAD_COLUMNS=1\n"),
            std::string::npos);
  EXPECT_FALSE(bench("TFC_TUNED=0 ").launched.count("tfc_cuda_column_sums_kernel"));
  EXPECT_EQ(
      runWith("TFC_TUNED=0 ", "bench --entry train_step --steps 1 --warmup 1").find(tunedLine),
      std::string::npos);
  EXPECT_FALSE(bench("TFC_BGRAD_COLUMNS=0 ").launched.count("tfc_cuda_column_sums_kernel"));
  EXPECT_NE(runWith("TFC_BGRAD_COLUMNS=0 ", "bench --entry train_step --steps 1 --warmup 1")
                .find(tunedLine + "TFC_SMALL_GEMM=0\n"),
            std::string::npos);
  ASSERT_NO_FATAL_FAILURE(writeSplits());
  EXPECT_NE(runWith("", "train --epochs 1 --data " + dir_ + "/data --run-dir " + dir_ + "/run")
                .find("device settings tune chose for this GPU (TFC_TUNED=0: not): "
                      "TFC_SMALL_GEMM=0 TFC_BGRAD_COLUMNS=1\n"),
            std::string::npos);
  // A value the switch does not take (a hand-edited line) is named, not applied.
  keep(key + "\tTFC_SMALL_GEMM=some TFC_BGRAD_COLUMNS=1");
  {
    const std::string benched = runWith("", "bench --entry train_step --steps 1 --warmup 1");
    EXPECT_NE(benched.find("note: TFC_SMALL_GEMM=some in " + cache +
                           " not applied: setting "
                           "TFC_SMALL_GEMM takes tiny, 1 or 0, not 'some' (run tune again)"),
              std::string::npos)
        << benched;
    EXPECT_NE(benched.find(tunedLine + "TFC_BGRAD_COLUMNS=1\n"), std::string::npos) << benched;
  }
  // Another model's line (its manifest's digest differs) is not this one's.
  std::string other = key;
  other[14] = other[14] == '0' ? '1' : '0'; // "model reverse " then the digest
  keep(other + "\tTFC_BGRAD_COLUMNS=1");
  EXPECT_FALSE(bench("").launched.count("tfc_cuda_column_sums_kernel"));
  env_ = "";
}

// TFC_DEPENDENT_LAUNCH=1 on the fake's sm_90: the hand-written kernels are
// programmatic dependent launches; the generated ones are not, for a PTX
// image (the fake loads no other): the driver compiles that PTX, which is
// sm_80's, without the wait (only a fatbin's sm_90 SASS has it, and its
// manifest says so: tests/lit/lowering/cuda/precision.tf). Without the
// setting, and by default, none is.
TEST_F(OnFakes, DependentLaunchesUnderTfcDependentLaunch) {
  ASSERT_NO_FATAL_FAILURE(compile("reverse"));
  ASSERT_TRUE(manifest_.cuda);
  EXPECT_TRUE(manifest_.cuda->dependentLaunch.empty());
  FakeLog plain = runEntry("train_step");
  EXPECT_TRUE(plain.programmatic.empty()) << plain.text;
  env_ = "TFC_DEPENDENT_LAUNCH=1 ";
  std::remove((dir_ + "/run-train_step.log").c_str()); // the fake appends to it
  FakeLog dependent = runEntry("train_step");
  EXPECT_EQ(dependent.launched, plain.launched);
  std::set<std::string> handWritten;
  for (const std::string &name : dependent.launched)
    if (name.rfind("tfc_cuda_", 0) == 0)
      handWritten.insert(name);
  EXPECT_TRUE(handWritten.count("tfc_cuda_layer_norm_forward_kernel")) << dependent.text;
  EXPECT_EQ(dependent.programmatic, handWritten) << dependent.text;
  EXPECT_EQ(dependent.text.find("INVALID"), std::string::npos) << dependent.text;
}

// A short `train` (12 samples: three steps of 4, then evaluation on 4 and 4):
// train_step eager, captured, replayed, with every launch accepted, each
// step's and evaluation's batch gathered on the device (gather.cu, 256
// threads a block, and its one-warp advance of the batch's first row; the
// fake runs both on the host) as part of the entry's call: eagerly at an
// entry's first call, inside its graph after that.
TEST_F(OnFakes, ReverseTrainsAnEpoch) {
  ASSERT_NO_FATAL_FAILURE(compile("reverse"));
  ASSERT_NO_FATAL_FAILURE(writeSplits());
  FakeLog train = runOnFakes("train", "train --epochs 1 --data " + dir_ + "/data --run-dir " +
                                          dir_ + "/run");
  EXPECT_GT(train.eager, 0u);
  EXPECT_GT(train.captured, 0u);
  EXPECT_GE(train.captures, 1u);
  EXPECT_EQ(train.capturedNodes.size(), train.captures);
  EXPECT_FALSE(train.replayedNodes.empty());
  EXPECT_EQ(train.blocks["tfc_cuda_gather_rows_kernel"], std::set<std::string>{"256x1x1"});
  EXPECT_EQ(train.blocks["tfc_cuda_advance_first_kernel"], std::set<std::string>{"32x1x1"});
  // Three steps, then a batch of the validation split and one of the test
  // split (gathered from their samples on the device too): one gather an
  // input and one advance each. Outside graphs: train_step's first (eager)
  // step and evaluate's first call (the validation's batch); captured in
  // graphs: the second and third steps' (each step's buffers are a new set
  // until the four sets come round) and the test's batch (other samples: a
  // graph of its own).
  size_t eager = 0, captured = 0, advances = 0;
  for (const std::string &line : linesOf(train.text)) {
    if (line.rfind("cuLaunchKernel(tfc_cuda_gather_rows_kernel,", 0) == 0)
      ++(line.find(" captured") == std::string::npos ? eager : captured);
    advances += line.rfind("cuLaunchKernel(tfc_cuda_advance_first_kernel,", 0) == 0;
  }
  EXPECT_EQ(eager, 2 * manifest_.inputs.size()) << train.text;
  EXPECT_EQ(captured, 3 * manifest_.inputs.size()) << train.text;
  EXPECT_EQ(advances, 5u) << train.text;
  EXPECT_EQ(countOf(train.text, "gather ran: "), (3 + 1 + 1) * manifest_.inputs.size());
  EXPECT_NE(fileBytes(dir_ + "/run/last.safetensors"), "");
  EXPECT_NE(fileBytes(dir_ + "/run/metrics.jsonl"), "");
}

// Under TFC_GRAPH_DEPENDENCIES=1 the captured steps are graphs whose nodes
// wait only for what they depend on (tf-graph-dependencies'
// tfc_cuda_graph_node calls, cuStreamUpdateCaptureDependencies): a weight
// gradient's GEMM is off the path to the next layer's input gradient, so the
// longest path is shorter than the step; each graph still replays with
// every launch accepted. By default each capture is a chain, as is a
// binary compiled with --no-graph-dependencies under the setting.
TEST_F(OnFakes, GraphDependenciesBranchTheCapturedStep) {
  auto graphs = [&](const std::string &name, const std::string &compileFlags) {
    std::vector<std::pair<size_t, size_t>> found; // nodes, longest path
    compile("reverse", compileFlags);
    writeSplits();
    std::remove((dir_ + "/" + name + ".log").c_str()); // the fake appends to it
    FakeLog train = runOnFakes(name, "train --epochs 1 --data " + dir_ + "/data --run-dir " + dir_ +
                                         "/run-" + name);
    EXPECT_GE(train.captures, 1u) << train.text;
    EXPECT_FALSE(train.replayedNodes.empty()) << train.text;
    for (const std::string &line : linesOf(train.text)) {
      size_t nodes = 0, edges = 0, longest = 0;
      if (std::sscanf(line.c_str(), "captured graph: %zu nodes, %zu edges, the longest path %zu",
                      &nodes, &edges, &longest) == 3)
        found.push_back({nodes, longest});
    }
    return found;
  };
  env_ = "TFC_GRAPH_DEPENDENCIES=1 ";
  std::vector<std::pair<size_t, size_t>> branched = graphs("dependencies", "");
  ASSERT_FALSE(branched.empty());
  EXPECT_TRUE(
      std::any_of(branched.begin(), branched.end(), [](auto g) { return g.second < g.first; }));
  for (auto [nodes, longest] : branched)
    EXPECT_LE(longest, nodes);
  EXPECT_TRUE(graphs("chain", "--no-graph-dependencies").empty());
  env_ = "";
  EXPECT_TRUE(graphs("default", "").empty());
}

// A train step's loss and its gradient (tf.cross_entropy and
// tf.cross_entropy_grad of the same logits) are one call,
// tfc_cuda_cross_entropy_fused: one launch of the fused kernel (each row's
// logits read once, its last block adding the losses: no mean kernel),
// where --no-fused-cross-entropy launches the forward (the mean in its last
// block too) and the backward, each reading the logits.
TEST_F(OnFakes, CrossEntropyLossAndGradientReadTheLogitsOnce) {
  const std::string forward = "cuLaunchKernel(tfc_cuda_cross_entropy_forward_kernel,",
                    mean = "cuLaunchKernel(tfc_cuda_cross_entropy_mean_kernel,",
                    backward = "cuLaunchKernel(tfc_cuda_cross_entropy_backward_kernel,",
                    fused = "cuLaunchKernel(tfc_cuda_cross_entropy_fused_kernel,";
  ASSERT_NO_FATAL_FAILURE(compile("reverse"));
  for (const char *entry : {"train_step", "grad_step"}) {
    SCOPED_TRACE(entry);
    FakeLog step = runEntry(entry);
    EXPECT_EQ(countOf(step.text, fused), 1u) << step.text;
    EXPECT_EQ(countOf(step.text, mean), 0u);
    EXPECT_EQ(countOf(step.text, forward), 0u);
    EXPECT_EQ(countOf(step.text, backward), 0u);
  }

  ASSERT_NO_FATAL_FAILURE(compile("reverse", "--no-fused-cross-entropy"));
  FakeLog step = runEntry("train_step");
  EXPECT_EQ(countOf(step.text, fused), 0u) << step.text;
  EXPECT_EQ(countOf(step.text, forward), 1u);
  EXPECT_EQ(countOf(step.text, mean), 0u);
  EXPECT_EQ(countOf(step.text, backward), 1u);
}

// One launch for many parameters' updates: 80 layers' weights and biases
// (clipped, so every update waits for the global norm) are one kernel of
// 643 parameters (each weight, its gradient and two moments, written in
// place), 5.1 KB: past the 4 KiB that PTX ISA 8.0 allows
// (ptxas: "requires PTX ISA .version 8.1"), within 8.1's 32 KiB. It
// assembles for sm_80 and sm_90, and train_step launches it on the fakes,
// eager and in a graph, with every pointer inside the arena.
TEST_F(OnFakes, OneLaunchUpdatesEveryParameter) {
  std::string dir = makeTempDir("cuda-wide-update");
  ASSERT_FALSE(dir.empty());
  std::string source = "model wide_update {\n  input x: f32[batch, 4]\n"
                       "  input y: f32[batch, 4]\n  let h = x\n";
  for (int i = 0; i < 80; ++i)
    source += "  h = relu(linear(h, 4, name: \"l" + std::to_string(i) + "\"))\n";
  source += "  loss mse(h, y)\n  output h\n}\n\ntrain wide_update {\n  batch 4\n"
            "  epochs 1\n  optimizer adam(lr: 1e-3)\n  clip_grad_norm 1.0\n}\n";
  std::string path = dir + "/wide_update.tf";
  ASSERT_TRUE(static_cast<bool>(std::ofstream(path) << source));

  std::string ptx = dir + "/wide_update.ptx";
  CommandResult r = run(kTfc + " compile " + path + " --target=cuda --cuda-path=" + kToolkit +
                        " --emit=ptx -o " + ptx);
  ASSERT_EQ(r.status, 0) << r.output;
  std::string text = fileBytes(ptx);
  EXPECT_NE(text.find(".version 8.1"), std::string::npos);
  size_t widest = 0;
  for (size_t at = text.find(".entry "); at != std::string::npos;
       at = text.find(".entry ", at + 1)) {
    size_t end = text.find(')', at);
    size_t params = 0;
    for (size_t p = text.find(".param", at); p < end; p = text.find(".param", p + 1))
      ++params;
    widest = std::max(widest, params);
  }
  EXPECT_GT(widest * 8, 4352u) << "no kernel past PTX 8.0's parameter space: the test is vacuous";
  for (const char *arch : {"sm_80", "sm_90"}) {
    r = run(kToolkit + "/bin/ptxas -arch=" + arch + " " + ptx + " -o " + dir + "/" + arch + ".cubin");
    EXPECT_EQ(r.status, 0) << arch << ": " << r.output.substr(0, 2000);
  }

  ASSERT_NO_FATAL_FAILURE(compile("wide_update", "", path));
  FakeLog step = runEntry("train_step");
  EXPECT_GT(step.eager, 0u);
  FakeLog bench = runOnFakes("bench", "bench --steps 2");
  EXPECT_GT(bench.captured, 0u);
}

// `bench --profile`: after the timed calls, --steps more run eagerly with
// every operation between two events (the fake's clock ticks a microsecond
// a call it records, so each has a time). The table counts, a call, as many
// generated and hand-written kernels as an eager call launches and as many
// cuBLASLt calls as it makes; a generated kernel is named with its source
// (the manifest's kernel_sources: the entry and the model file's lines its
// operations come from; the optimizer's update has none).
TEST_F(OnFakes, BenchProfileTimesEachOperation) {
  ASSERT_NO_FATAL_FAILURE(compile("reverse"));
  ASSERT_EQ(manifest_.cuda->kernelSources.size(), manifest_.cuda->kernels.size());
  for (const std::string &source : manifest_.cuda->kernelSources)
    EXPECT_TRUE(std::regex_match(source, std::regex("(train_step|grad_step|apply_step|predict|"
                                                    "evaluate)(: reverse.tf:[0-9]+(,[0-9]+)*)?")))
        << source;
  // The forward's kernels have their lines (the optimizer's have none).
  EXPECT_EQ(manifest_.cuda->kernelSources.front(), "train_step: reverse.tf:10,11");
  const std::string log = dir_ + "/profile.log";
  // Every product on cuBLASLt first (the fake counts its matmuls).
  CommandResult r = run(kFakes + "TFC_SMALL_GEMM=0 TFC_FAKE_CUDA_LOG=" + log + " " + binary_ +
                        " bench --entry train_step --steps 3 --warmup 1 --profile");
  ASSERT_EQ(r.status, 0) << r.output;
  FakeLog fake(log);
  // Calls: 1 warm-up (eager), 3 timed (each captured: a new buffer set
  // each), 3 profiled (eager). GEMMs run at eager calls and captures.
  const size_t eagerCalls = 1 + 3;
  ASSERT_EQ(fake.eager % eagerCalls, 0u) << fake.text;
  const size_t gemmCalls = eagerCalls + fake.captures;
  ASSERT_EQ(fake.gemms % gemmCalls, 0u) << fake.text;
  const size_t kernels = fake.eager / eagerCalls, gemms = fake.gemms / gemmCalls;

  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("profile train_step: 3 calls run eagerly, each "
                                           "operation timed alone on the device: ([0-9.]+) ms a "
                                           "call in ([0-9]+) operations")))
      << r.output;
  EXPECT_GT(std::stod(m[1]), 0.0);
  EXPECT_EQ(std::stoul(m[2]), kernels + gemms) << r.output;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("by kind: generated [0-9.]+% \\(([0-9]+) a call\\), "
                                           "cuBLASLt [0-9.]+% \\(([0-9]+) a call\\), hand-written "
                                           "[0-9.]+% \\(([0-9]+) a call\\)")))
      << r.output;
  EXPECT_EQ(std::stoul(m[1]) + std::stoul(m[3]), kernels) << r.output;
  EXPECT_EQ(std::stoul(m[2]), gemms) << r.output;
  // Each row: a share, a time a call above 0, calls a call, its kind, a name.
  size_t rows = 0, named = 0;
  for (const std::string &line : linesOf(r.output)) {
    std::smatch row;
    if (!std::regex_match(line, row,
                          std::regex(" +[0-9.]+% +([0-9.]+) +[0-9]+  (generated|cuBLASLt|"
                                     "hand-written) +(.*)")))
      continue;
    ++rows;
    EXPECT_GT(std::stod(row[1]), 0.0) << line;
    if (row[2] == "generated") {
      const std::string name = row[3];
      EXPECT_TRUE(std::regex_match(name, std::regex("tfc_k[0-9]+ \\(train_step(: reverse.tf:"
                                                    "[0-9,]+)?\\)")))
          << name;
      ++named;
    }
  }
  EXPECT_GT(rows, 10u) << r.output;
  EXPECT_GT(named, 0u) << r.output;
  // The operations on the longest path of ones that wait for each other
  // (tf-graph-dependencies): fewer than all, a weight gradient being beside
  // the input gradients' chain.
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("longest path: ([0-9.]+) ms a call of the ([0-9.]+) "
                                           "the operations add up to")))
      << r.output;
  EXPECT_GT(std::stod(m[1]), 0.0) << r.output;
  EXPECT_LT(std::stod(m[1]), std::stod(m[2])) << r.output;

  // TFC_SMALL_GEMM=1: reverse's products on gemm_small.cu, each one
  // operation of the profile (its kernels timed together), so as many
  // operations as with cuBLASLt, the products hand-written and named by
  // their shape.
  r = run(kFakes + "TFC_SMALL_GEMM=1 " + binary_ +
          " bench --entry train_step --steps 3 --warmup 1 --profile");
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("a call in ([0-9]+) operations")))
      << r.output;
  EXPECT_EQ(std::stoul(m[1]), kernels + gemms) << r.output;
  EXPECT_EQ(r.output.find("  cuBLASLt "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  hand-written  small GEMM 64x32x32 B^T, bias, residual"),
            std::string::npos)
      << r.output;

  // Compiled without graph dependencies: no path to give.
  ASSERT_NO_FATAL_FAILURE(compile("reverse", "--no-graph-dependencies"));
  r = run(kFakes + binary_ + " bench --entry train_step --steps 1 --warmup 1 --profile");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("profile train_step:"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("longest path:"), std::string::npos) << r.output;
}

// --persistent-kernels: each entry one cooperative launch of one kernel (its
// phases separated by grid barriers), no cuBLASLt and no hand-written
// kernel; train_step's graph is that one node. The grid is what the GPU
// holds at once, at most the 264 blocks the kernel asks for: all of them
// on the fake's 132 multiprocessors of 2048 threads, 132 when one block
// fits a multiprocessor, and a kernel no block of which fits is refused
// with a message, exit 1.
TEST_F(OnFakes, PersistentKernelIsOneLaunchAnEntry) {
  // The file's batch of 128: its phases ask for more blocks than the grid.
  ASSERT_NO_FATAL_FAILURE(
      compile("reverse", "--persistent-kernels", kSource + "/models/reverse.tf"));
  EXPECT_TRUE(manifest_.cuda->persistent);
  CommandResult info = run(binary_ + " info");
  EXPECT_EQ(info.status, 0) << info.output;
  EXPECT_NE(info.output.find("persistent kernels: each entry one cooperative launch"),
            std::string::npos)
      << info.output;
  EXPECT_NE(info.output.find("no cuBLASLt: the persistent kernels compute every GEMM"),
            std::string::npos)
      << info.output;
  for (const char *entry : {"predict", "train_step", "evaluate"}) {
    SCOPED_TRACE(entry);
    FakeLog log = runEntry(entry);
    EXPECT_EQ(log.eager, 1u) << log.text;
    EXPECT_EQ(log.cooperative, 1u) << log.text;
    EXPECT_EQ(log.gemms, 0u);
    // Nor is cuBLASLt loaded, nor its workspace allocated.
    EXPECT_EQ(log.text.find("cublasLtCreate"), std::string::npos) << log.text;
    for (const auto &[kernel, block] : kHandKernels)
      EXPECT_FALSE(log.launched.count(kernel)) << kernel;
    EXPECT_NE(log.text.find("cuLaunchKernelEx(tfc_k"), std::string::npos);
    EXPECT_NE(log.text.find(", grid 264x1x1, block 256x1x1, smem 0, cooperative)"),
              std::string::npos)
        << log.text;
  }
  // Every graph bench captures is the one launch.
  FakeLog bench = runOnFakes("bench", "bench --steps 2");
  EXPECT_GT(bench.captures, 0u);
  EXPECT_EQ(bench.capturedNodes, std::vector<size_t>(bench.captures, 1)) << bench.text;
  EXPECT_EQ(bench.captured, bench.captures);
  EXPECT_EQ(bench.cooperative, bench.eager + bench.captured);

  const std::string bench1 = dir_ + "/bench-occupancy-1.log";
  CommandResult r = run(kFakes + "TFC_FAKE_CUDA_OCCUPANCY=1 TFC_FAKE_CUDA_LOG=" + bench1 + " " +
                        binary_ + " bench --steps 1");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(fileBytes(bench1).find(", grid 132x1x1, block 256x1x1, smem 0, cooperative)"),
            std::string::npos)
      << fileBytes(bench1);
  r = run(kFakes + "TFC_FAKE_CUDA_OCCUPANCY=0 " + binary_ + " bench --steps 1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("cannot run on this GPU: not one block of 256 threads fits"),
            std::string::npos)
      << r.output;
}

// --precision tf32 and bf16 end to end: the manifest says which, and every
// GEMM's cuBLASLt plan has its compute type (the fake logs each matmul
// descriptor's), never another; the default is CUBLAS_COMPUTE_32F.
TEST_F(OnFakes, PrecisionReachesEveryGemmPlan) {
  env_ = "TFC_SMALL_GEMM=0 "; // reverse's products are small enough for gemm_small.cu
  const std::pair<const char *, const char *> precisions[] = {
      {"tf32", "CUBLAS_COMPUTE_32F_FAST_TF32"}, {"bf16", "CUBLAS_COMPUTE_32F_FAST_16BF"}};
  for (const auto &[precision, computeType] : precisions) {
    SCOPED_TRACE(precision);
    ASSERT_NO_FATAL_FAILURE(compile("reverse", std::string("--precision ") + precision));
    EXPECT_EQ(manifest_.cuda->precision, precision);
    FakeLog predict = runEntry("predict");
    EXPECT_GT(predict.gemms, 0u);
    EXPECT_EQ(countOf(predict.text, "cublasLtMatmulDescCreate("),
              countOf(predict.text, std::string("cublasLtMatmulDescCreate(") + computeType + ")"))
        << predict.text;
    EXPECT_GT(countOf(predict.text, computeType), 0u) << predict.text;
  }
  ASSERT_NO_FATAL_FAILURE(compile("reverse"));
  EXPECT_EQ(manifest_.cuda->precision, "fp32");
  FakeLog fp32 = runEntry("predict");
  EXPECT_NE(fp32.text.find("cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F)"), std::string::npos);
  EXPECT_EQ(fp32.text.find("FAST_"), std::string::npos);
}

// --precision bf16 with every GEMM on bf16 copies (set_anomaly at batch 4):
// the 9 products of train_step that only loop nests read are stored in bf16
// by cuBLASLt (tf-bf16-gemm-operands' gemm-results; the fake logs " bf16 D"
// and takes each, INVALID otherwise), and so are the 4 QKV projections,
// which only the attention calls read, with their bias (attention-inputs:
// a bf16 bias, the attention kernels reading the bits: an error of theirs
// would fail the run), and the 4 out projections' input gradients, which
// only the attention backwards read, as dO (no bias); the others read bf16
// A and B into an fp32 C. --no-bf16-gemm-results stores the first 9 in
// fp32, --no-bf16-attention-inputs the 8 others.
TEST_F(OnFakes, Bf16ResultsReachCublasLt) {
  for (const std::string flag : {"", " --no-bf16-gemm-results", " --no-bf16-attention-inputs"}) {
    SCOPED_TRACE(flag);
    ASSERT_NO_FATAL_FAILURE(compile("set_anomaly", "--precision bf16 --bf16-operands=all" + flag));
    FakeLog step = runEntry("train_step");
    EXPECT_EQ(countOf(step.text, "INVALID"), 0u) << step.text;
    const bool results = flag != " --no-bf16-gemm-results",
               inputs = flag != " --no-bf16-attention-inputs";
    EXPECT_EQ(countOf(step.text, " bf16 D, beta 0)"), (results ? 9u : 0u) + (inputs ? 4u : 0u))
        << step.text;
    EXPECT_EQ(countOf(step.text, " bf16 D, beta 0, bias)"), inputs ? 4u : 0u) << step.text;
    EXPECT_GT(countOf(step.text, " bf16, beta"), 9u) << step.text;
    EXPECT_EQ(countOf(step.text, "cublasLtMatmul("),
              countOf(step.text, " bf16 D, beta") + countOf(step.text, " bf16, beta"))
        << step.text;
  }
}

// --precision bf16 and tf32 move attention onto attention_tc.cu's tensor-core
// kernels where its heads qualify (reverse's are 32 wide); fp32 keeps
// attention.cu's. The fake accepts every launch against the fatbin's
// parameters and the kernel's block size (an error would fail the run).
TEST_F(OnFakes, AttentionTakesTheTensorCoresUnderBf16AndTf32) {
  const char *tc[] = {"cuLaunchKernel(tfc_cuda_attention_tc_forward_kernel,",
                      "cuLaunchKernel(tfc_cuda_attention_tc_backward_dq_kernel,",
                      "cuLaunchKernel(tfc_cuda_attention_tc_backward_dkv_kernel,"};
  const char *fp32[] = {"cuLaunchKernel(tfc_cuda_attention_forward_kernel,",
                        "cuLaunchKernel(tfc_cuda_attention_backward_dq_kernel,",
                        "cuLaunchKernel(tfc_cuda_attention_backward_dkv_kernel,"};
  for (const char *precision : {"bf16", "tf32"}) {
    SCOPED_TRACE(precision);
    ASSERT_NO_FATAL_FAILURE(compile("reverse", std::string("--precision ") + precision));
    FakeLog step = runEntry("train_step");
    for (const char *launch : tc)
      EXPECT_GT(countOf(step.text, launch), 0u) << launch << "\n" << step.text;
    for (const char *launch : fp32)
      EXPECT_EQ(countOf(step.text, launch), 0u) << launch << "\n" << step.text;
    EXPECT_EQ(countOf(step.text, "INVALID"), 0u) << step.text;
    // The backward has its forward's statistics, and no room for dS on
    // tensor cores: dq first, storing its rows' statistics and D for dkv.
    ASSERT_NE(step.text.find(tc[2]), std::string::npos) << step.text;
    EXPECT_LT(step.text.find(tc[1]), step.text.find(tc[2])) << step.text;
  }
  // TFC_ATTENTION_LEAN=1 (tf32, compiled last): the lean forward and dq
  // instead of the default ones, the same dkv after dq.
  env_ = "TFC_ATTENTION_LEAN=1 ";
  std::remove((dir_ + "/run-train_step.log").c_str());
  FakeLog lean = runEntry("train_step");
  env_ = "";
  const char *leanLaunches[] = {"cuLaunchKernel(tfc_cuda_attention_tc_forward_lean_kernel,",
                                "cuLaunchKernel(tfc_cuda_attention_tc_backward_dq_lean_kernel,"};
  for (const char *launch : leanLaunches)
    EXPECT_GT(countOf(lean.text, launch), 0u) << launch << "\n" << lean.text;
  EXPECT_EQ(countOf(lean.text, tc[0]) + countOf(lean.text, tc[1]), 0u) << lean.text;
  ASSERT_NE(lean.text.find(tc[2]), std::string::npos) << lean.text;
  EXPECT_LT(lean.text.find(leanLaunches[1]), lean.text.find(tc[2])) << lean.text;
  EXPECT_EQ(countOf(lean.text, "INVALID"), 0u) << lean.text;
  // TFC_ATTENTION_WGMMA=1: reverse's heads are 32 wide, not wgmma's 64: the
  // tensor cores' kernels still (set_anomaly's take wgmma: below).
  env_ = "TFC_ATTENTION_WGMMA=1 ";
  std::remove((dir_ + "/run-train_step.log").c_str());
  FakeLog narrow = runEntry("train_step");
  env_ = "";
  EXPECT_EQ(countOf(narrow.text, "cuLaunchKernel(tfc_cuda_attention_wgmma_"), 0u) << narrow.text;
  EXPECT_GT(countOf(narrow.text, tc[0]), 0u) << narrow.text;
  ASSERT_NO_FATAL_FAILURE(compile("reverse"));
  FakeLog step = runEntry("train_step");
  for (const char *launch : fp32)
    EXPECT_GT(countOf(step.text, launch), 0u) << launch << "\n" << step.text;
  // In fp32: dkv first, storing dS (f32) for dq; with TFC_ATTENTION_DS=0,
  // dq first, recomputing the scores.
  EXPECT_LT(step.text.find(fp32[2]), step.text.find(fp32[1])) << step.text;
  env_ = "TFC_ATTENTION_DS=0 ";
  std::remove((dir_ + "/run-train_step.log").c_str()); // the fake appends to it
  FakeLog recomputed = runEntry("train_step");
  ASSERT_NE(recomputed.text.find(fp32[2]), std::string::npos) << recomputed.text;
  EXPECT_LT(recomputed.text.find(fp32[1]), recomputed.text.find(fp32[2])) << recomputed.text;
  env_ = "";
  for (const char *launch : tc) // (loaded, but not launched)
    EXPECT_EQ(countOf(step.text, launch), 0u) << launch << "\n" << step.text;
}

// TFC_ATTENTION_WGMMA=1 on a model whose heads are 64 wide (set_anomaly,
// --precision bf16): its attention runs attention_wgmma.cu's three kernels
// (the fake takes their sm_90a image, and checks each launch against its
// parameters), dq before dkv; without the switch, attention_tc.cu's.
TEST_F(OnFakes, AttentionOnWgmmaUnderItsSwitch) {
  ASSERT_NO_FATAL_FAILURE(compile("set_anomaly", "--precision bf16"));
  const char *wgmma[] = {"cuLaunchKernel(tfc_cuda_attention_wgmma_forward_kernel,",
                         "cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dq_kernel,",
                         "cuLaunchKernel(tfc_cuda_attention_wgmma_backward_dkv_kernel,"};
  env_ = "TFC_ATTENTION_WGMMA=1 ";
  FakeLog on = runEntry("train_step");
  env_ = "";
  for (const char *launch : wgmma)
    EXPECT_GT(countOf(on.text, launch), 0u) << launch << "\n" << on.text;
  EXPECT_EQ(countOf(on.text, "cuLaunchKernel(tfc_cuda_attention_tc_"), 0u) << on.text;
  ASSERT_NE(on.text.find(wgmma[2]), std::string::npos) << on.text;
  EXPECT_LT(on.text.find(wgmma[1]), on.text.find(wgmma[2])) << on.text;
  EXPECT_EQ(countOf(on.text, "INVALID"), 0u) << on.text;
  std::remove((dir_ + "/run-train_step.log").c_str());
  FakeLog off = runEntry("train_step");
  EXPECT_EQ(countOf(off.text, "cuLaunchKernel(tfc_cuda_attention_wgmma_"), 0u) << off.text;
  EXPECT_GT(countOf(off.text, "cuLaunchKernel(tfc_cuda_attention_tc_forward_kernel,"), 0u)
      << off.text;
  // TFC_ATTENTION_WIDE=1 with it: the two-warpgroup forward, dq and dkv,
  // 256 threads a block and half the blocks (set_anomaly's 10 queries: a
  // block a head), dq with 65 KiB and dkv with 81 KiB of dynamic shared
  // memory, each opted into once.
  env_ = "TFC_ATTENTION_WGMMA=1 TFC_ATTENTION_WIDE=1 ";
  std::remove((dir_ + "/run-train_step.log").c_str());
  FakeLog wide = runEntry("train_step");
  env_ = "";
  EXPECT_EQ(countOf(wide.text, "cuLaunchKernel(tfc_cuda_attention_wgmma_forward_kernel,"), 0u)
      << wide.text;
  const std::string wideLaunch =
      lineWith(wide.text, "cuLaunchKernel(tfc_cuda_attention_wgmma_forward_wide_kernel,");
  ASSERT_NE(wideLaunch, "") << wide.text;
  EXPECT_NE(wideLaunch.find("block 256x1x1"), std::string::npos) << wideLaunch;
  // Each wide backward kernel: 256 threads and its dynamic shared memory,
  // opted into once.
  auto wideBackward = [&](const std::string &kernel, const std::string &bytes) {
    const std::string launch = lineWith(wide.text, "cuLaunchKernel(" + kernel + ",");
    EXPECT_NE(launch.find("block 256x1x1, smem " + bytes), std::string::npos) << kernel << "\n"
                                                                              << wide.text;
    EXPECT_EQ(countOf(wide.text, "cuFuncSetAttribute(" + kernel + ", " + bytes + ")"), 1u)
        << wide.text;
    return launch;
  };
  const std::string dqLaunch =
      wideBackward("tfc_cuda_attention_wgmma_backward_dq_wide_kernel", "66560");
  const std::string dkvLaunch =
      wideBackward("tfc_cuda_attention_wgmma_backward_dkv_wide_kernel", "82944");
  ASSERT_NE(dqLaunch, "") << wide.text;
  ASSERT_NE(dkvLaunch, "") << wide.text;
  EXPECT_LT(wide.text.find(dqLaunch), wide.text.find(dkvLaunch)) << wide.text;
  for (const char *launch : wgmma)
    EXPECT_EQ(countOf(wide.text, launch), 0u) << launch << "\n" << wide.text;
  EXPECT_EQ(countOf(wide.text, "INVALID"), 0u) << wide.text;
  // Without wgmma the wide switch changes nothing.
  env_ = "TFC_ATTENTION_WIDE=1 ";
  std::remove((dir_ + "/run-train_step.log").c_str());
  FakeLog wideAlone = runEntry("train_step");
  env_ = "";
  EXPECT_EQ(countOf(wideAlone.text, "cuLaunchKernel(tfc_cuda_attention_wgmma_"), 0u)
      << wideAlone.text;
  // `info` names the switches, and whether this GPU (the fake's sm_90) takes
  // the wgmma image; with no GPU, that it cannot say.
  CommandResult info = run(kFakes + binary_ + " info");
  EXPECT_EQ(info.status, 0) << info.output;
  EXPECT_NE(info.output.find("TFC_ATTENTION_WGMMA=1 wgmma for heads of 64 (sm_90a SASS: this "
                             "GPU takes it)"),
            std::string::npos)
      << info.output;
  CommandResult none = run(kNoDriver + binary_ + " info");
  EXPECT_NE(none.output.find("(sm_90a SASS: no GPU here to say whether it takes it)"),
            std::string::npos)
      << none.output;
  // A GPU that takes none of the wgmma image (an A100's driver refuses its
  // sm_90a SASS): the runtime loads the others and, the switch on, runs
  // attention_tc.cu's kernels.
  env_ = "TFC_ATTENTION_WGMMA=1 TFC_FAKE_CUDA_NO_BINARY=_wgmma_ ";
  std::remove((dir_ + "/run-train_step.log").c_str());
  FakeLog refused = runEntry("train_step");
  env_ = "";
  EXPECT_EQ(countOf(refused.text, "): no binary for this GPU"), 1u) << refused.text;
  EXPECT_EQ(countOf(refused.text, "cuLaunchKernel(tfc_cuda_attention_wgmma_"), 0u) << refused.text;
  EXPECT_GT(countOf(refused.text, "cuLaunchKernel(tfc_cuda_attention_tc_forward_kernel,"), 0u)
      << refused.text;
  EXPECT_EQ(countOf(refused.text, "INVALID"), 0u) << refused.text;
}

// Reverse (attention, layer norm, embeddings), set_anomaly (dropout),
// fleuret_cnn (convolutions) and encoder_decoder (a causal mask: a constant
// table the attention kernel reads, which must be in device memory; in host
// memory it was an illegal address on the first GPU run, which the fake now
// refuses as a pointer outside every allocation).
INSTANTIATE_TEST_SUITE_P(Models, SeedModelOnFakes,
                         ::testing::Values("reverse", "set_anomaly", "fleuret_cnn",
                                           "encoder_decoder"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
