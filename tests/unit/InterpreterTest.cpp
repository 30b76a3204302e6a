//===- InterpreterTest.cpp - the reference interpreter against hand results -===//

#include "compiler/Registration.h"
#include "compiler/interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tfc;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source` and runs its first function; fails the test on error.
  std::vector<HostTensor> run(const std::string &source,
                              std::vector<HostTensor> args) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source;
    if (!module)
      return {};
    auto func = *module->getOps<mlir::func::FuncOp>().begin();
    std::string error;
    auto results = interpret(func, args, &error);
    EXPECT_TRUE(mlir::succeeded(results)) << error;
    return mlir::succeeded(results) ? *results : std::vector<HostTensor>{};
  }

  /// Runs expecting failure; returns the message.
  std::string runError(const std::string &source, std::vector<HostTensor> args) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    if (!module)
      return "parse failure";
    auto func = *module->getOps<mlir::func::FuncOp>().begin();
    std::string error;
    EXPECT_TRUE(mlir::failed(interpret(func, args, &error)));
    return error;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

void expectNear(const HostTensor &t, std::vector<int64_t> shape,
                std::vector<double> expected, double tol) {
  EXPECT_EQ(t.shape, shape);
  ASSERT_EQ(t.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(t.data[i], expected[i], tol) << "element " << i;
}

// The UvA tutorial's scaled dot-product example (seq_len 3, d_k 2).
TEST_F(InterpreterTest, TutorialScaledDotProduct) {
  auto results = run(R"(
    func.func @sdpa(%q: tensor<3x2xf32>, %k: tensor<3x2xf32>, %v: tensor<3x2xf32>)
        -> (tensor<3x2xf32>, tensor<3x3xf32>) {
      %o, %w = tf.attention %q, %k, %v scale 0.707106769 with_weights
          : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>, tensor<3x3xf32>
      return %o, %w : tensor<3x2xf32>, tensor<3x3xf32>
    })",
                     {HostTensor::f32({3, 2}, {0.3367, 0.1288, 0.2345, 0.2303, -1.1229, -0.1863}),
                      HostTensor::f32({3, 2}, {2.2082, -0.6380, 0.4617, 0.2674, 0.5349, 0.8094}),
                      HostTensor::f32({3, 2}, {1.1103, -1.6898, -0.9890, 0.9580, 1.3221, 0.8172})});
  ASSERT_EQ(results.size(), 2u);
  // The printed inputs are rounded to 4 decimals (error <= 5e-5 each); with
  // |q|,|k| <= 2.3 and |v| <= 1.7 that moves outputs by < 1e-4, plus the
  // 5e-5 rounding of the printed outputs: 1.5e-4 bounds both.
  expectNear(results[0], {3, 2}, {0.5698, -0.1520, 0.5379, -0.0265, 0.2246, 0.5556}, 1.5e-4);
  expectNear(results[1], {3, 3},
             {0.4028, 0.2886, 0.3086, 0.3538, 0.3069, 0.3393, 0.1303, 0.4630, 0.4067},
             1.5e-4);
}

TEST_F(InterpreterTest, AttentionMaskFillsLogits) {
  // Row 0 may only attend to key 0: its value is v[0] exactly.
  auto r = run(R"(
    func.func @f(%q: tensor<2x1xf32>, %k: tensor<2x1xf32>, %v: tensor<2x1xf32>, %m: tensor<2x2xi1>)
        -> tensor<2x1xf32> {
      %o = tf.attention %q, %k, %v mask %m scale 1.0
          : tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x2xi1> -> tensor<2x1xf32>
      return %o : tensor<2x1xf32>
    })",
               {HostTensor::f32({2, 1}, {1, 0}), HostTensor::f32({2, 1}, {0, 0}),
                HostTensor::f32({2, 1}, {3, 5}), HostTensor::i1({2, 2}, {1, 0, 1, 1})});
  expectNear(r[0], {2, 1}, {3, 4}, 1e-12);
}

TEST_F(InterpreterTest, Elementwise) {
  auto r = run(R"(
    func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
      %0 = tf.sub %a, %b : tensor<3xf32>
      %1 = tf.div %a, %b : tensor<3xf32>
      %2 = tf.max %a, %b : tensor<3xf32>
      %3 = tf.relu %0 : tensor<3xf32>
      %4 = tf.gelu %a : tensor<3xf32>
      %5 = tf.rsqrt %b : tensor<3xf32>
      return %0, %1, %2, %3, %4, %5 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    })",
               {HostTensor::f32({3}, {1, -2, 3}), HostTensor::f32({3}, {4, 1, 0.25})});
  expectNear(r[0], {3}, {-3, -3, 2.75}, 1e-12);
  expectNear(r[1], {3}, {0.25, -2, 12}, 1e-12);
  expectNear(r[2], {3}, {4, 1, 3}, 1e-12);
  expectNear(r[3], {3}, {0, 0, 2.75}, 1e-12);
  // gelu(1) = 0.8413447..., gelu(-2) = -0.0455002..., gelu(3) = 2.9959503...
  expectNear(r[4], {3}, {0.8413447460685429, -0.04550026389635842, 2.99595030590511}, 1e-12);
  expectNear(r[5], {3}, {0.5, 1, 2}, 1e-12);
}

TEST_F(InterpreterTest, CompareSelectCast) {
  auto r = run(R"(
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi1>) {
      %lt = tf.compare lt, %a, %b : tensor<4xf32>
      %s = tf.select %lt, %a, %b : tensor<4xi1>, tensor<4xf32>
      %i = tf.cast %a : tensor<4xf32> to tensor<4xi32>
      %n = tf.not %lt : tensor<4xi1>
      return %s, %i, %n : tensor<4xf32>, tensor<4xi32>, tensor<4xi1>
    })",
               {HostTensor::f32({4}, {1.7, -1.7, 3, 0}), HostTensor::f32({4}, {2, -2, 3, 1})});
  expectNear(r[0], {4}, {1.7, -2, 3, 0}, 1e-12);
  expectNear(r[1], {4}, {1, -1, 3, 0}, 0); // truncation toward zero
  EXPECT_EQ(r[1].type, ElementType::i32);
  expectNear(r[2], {4}, {0, 1, 1, 0}, 0);
}

TEST_F(InterpreterTest, ShapeOps) {
  auto r = run(R"(
    func.func @f(%x: tensor<2x3xf32>, %c: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x1xf32>, tensor<2x5xf32>, tensor<3x2xf32>) {
      %b = tf.broadcast_in_dim %c [1] : tensor<3xf32> to tensor<2x3xf32>
      %t = tf.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
      %s = tf.slice %x start [0, 1] limit [2, 3] stride [1, 2] : tensor<2x3xf32> -> tensor<2x1xf32>
      %t2 = tf.slice %x start [0, 0] limit [2, 2] stride [1, 1] : tensor<2x3xf32> -> tensor<2x2xf32>
      %cat = tf.concat %x, %t2 axis 1 : tensor<2x3xf32>, tensor<2x2xf32> -> tensor<2x5xf32>
      %r = tf.reshape %x : tensor<2x3xf32> to tensor<3x2xf32>
      return %b, %t, %s, %cat, %r : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x1xf32>, tensor<2x5xf32>, tensor<3x2xf32>
    })",
            {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), HostTensor::f32({3}, {7, 8, 9})});
  ASSERT_EQ(r.size(), 5u);
  expectNear(r[0], {2, 3}, {7, 8, 9, 7, 8, 9}, 0);
  expectNear(r[1], {3, 2}, {1, 4, 2, 5, 3, 6}, 0);
  expectNear(r[2], {2, 1}, {2, 5}, 0);
  expectNear(r[3], {2, 5}, {1, 2, 3, 1, 2, 4, 5, 6, 4, 5}, 0);
  expectNear(r[4], {3, 2}, {1, 2, 3, 4, 5, 6}, 0);
}

TEST_F(InterpreterTest, BroadcastSizeOneDim) {
  auto r = run(R"(
    func.func @f(%x: tensor<2x1xf32>) -> tensor<2x3xf32> {
      %b = tf.broadcast_in_dim %x [0, 1] : tensor<2x1xf32> to tensor<2x3xf32>
      return %b : tensor<2x3xf32>
    })",
               {HostTensor::f32({2, 1}, {1, 2})});
  expectNear(r[0], {2, 3}, {1, 1, 1, 2, 2, 2}, 0);
}

TEST_F(InterpreterTest, ReductionsAndArgmax) {
  auto r = run(R"(
    func.func @f(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<2xi32>) {
      %s = tf.reduce_sum %x [1] : tensor<2x3xf32> -> tensor<2xf32>
      %m = tf.reduce_max %x [0] : tensor<2x3xf32> -> tensor<3xf32>
      %a = tf.reduce_mean %x [0, 1] : tensor<2x3xf32> -> tensor<f32>
      %i = tf.argmax %x axis 1 : tensor<2x3xf32> -> tensor<2xi32>
      return %s, %m, %a, %i : tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<2xi32>
    })",
               {HostTensor::f32({2, 3}, {1, 5, 5, -1, -2, -3})});
  expectNear(r[0], {2}, {11, -6}, 1e-12);
  expectNear(r[1], {3}, {1, 5, 5}, 0);
  expectNear(r[2], {}, {5.0 / 6.0}, 1e-12);
  expectNear(r[3], {2}, {1, 0}, 0); // the first of two maxima
}

TEST_F(InterpreterTest, MatmulTransposeFlags) {
  const std::string body = R"(
    func.func @f(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
      %0 = tf.matmul %a, %b : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
      %1 = tf.matmul %a, %b transpose_lhs : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
      %2 = tf.matmul %a, %b transpose_rhs : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
      %3 = tf.matmul %a, %b transpose_lhs transpose_rhs : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
      return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
    })";
  // a = [[1, 2], [3, 4]], b = [[5, 6], [7, 8]]
  auto r = run(body, {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::f32({2, 2}, {5, 6, 7, 8})});
  expectNear(r[0], {2, 2}, {19, 22, 43, 50}, 0);
  expectNear(r[1], {2, 2}, {26, 30, 38, 44}, 0); // a^T b
  expectNear(r[2], {2, 2}, {17, 23, 39, 53}, 0); // a b^T
  expectNear(r[3], {2, 2}, {23, 31, 34, 46}, 0); // a^T b^T
}

TEST_F(InterpreterTest, BatchedMatmul) {
  auto r = run(R"(
    func.func @f(%a: tensor<2x1x2xf32>, %b: tensor<2x2x1xf32>) -> tensor<2x1x1xf32> {
      %0 = tf.matmul %a, %b : tensor<2x1x2xf32>, tensor<2x2x1xf32> -> tensor<2x1x1xf32>
      return %0 : tensor<2x1x1xf32>
    })",
               {HostTensor::f32({2, 1, 2}, {1, 2, 3, 4}), HostTensor::f32({2, 2, 1}, {5, 6, 7, 8})});
  expectNear(r[0], {2, 1, 1}, {17, 53}, 0);
}

TEST_F(InterpreterTest, SoftmaxAndLogSoftmax) {
  auto r = run(R"(
    func.func @f(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
      %s = tf.softmax %x axis 0 : tensor<2x2xf32>
      %l = tf.log_softmax %x axis 1 : tensor<2x2xf32>
      return %s, %l : tensor<2x2xf32>, tensor<2x2xf32>
    })",
               {HostTensor::f32({2, 2}, {0, 1000, std::log(3.0), 1000})});
  // Column 0: softmax(0, ln 3) = (1/4, 3/4); column 1 is equal: (1/2, 1/2)
  // even at 1000, where a naive exp overflows.
  expectNear(r[0], {2, 2}, {0.25, 0.5, 0.75, 0.5}, 1e-12);
  expectNear(r[1], {2, 2}, {-1000, 0, std::log(3.0) - 1000, 0}, 1e-9);
}

TEST_F(InterpreterTest, LayerNorm) {
  auto r = run(R"(
    func.func @f(%x: tensor<1x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
      %0 = tf.layer_norm %x, %g, %b {epsilon = 0.0001 : f32} : tensor<1x4xf32>, tensor<4xf32>
      return %0 : tensor<1x4xf32>
    })",
               {HostTensor::f32({1, 4}, {1, 2, 3, 4}), HostTensor::f32({4}, {1, 1, 2, 2}),
                HostTensor::f32({4}, {0, 0, 0, 1})});
  // mean 2.5, biased variance 1.25
  double s = 1.0 / std::sqrt(1.25 + 1e-4);
  expectNear(r[0], {1, 4}, {-1.5 * s, -0.5 * s, 2 * 0.5 * s, 2 * 1.5 * s + 1}, 1e-7);
}

TEST_F(InterpreterTest, DropoutEvalIsIdentityTrainingKeepsRate) {
  const char *source = R"(
    func.func @f(%x: tensor<100x100xf32>, %s: tensor<i32>) -> (tensor<100x100xf32>, tensor<100x100xf32>) {
      %e = tf.dropout %x, %s rate 0.25 key 0 : tensor<100x100xf32>
      %t = tf.dropout %x, %s rate 0.25 key 1 training : tensor<100x100xf32>
      return %e, %t : tensor<100x100xf32>, tensor<100x100xf32>
    })";
  HostTensor ones = HostTensor::f32({100, 100}, std::vector<double>(10000, 1.0));
  auto r = run(source, {ones, HostTensor::i32({}, {7})});
  EXPECT_EQ(r[0].data, ones.data);
  int zeros = 0;
  for (double v : r[1].data) {
    EXPECT_TRUE(v == 0.0 || std::abs(v - 1 / 0.75) < 1e-12);
    zeros += v == 0.0;
  }
  // 10,000 Bernoulli(0.25) draws: mean 2500, standard deviation ~43.
  EXPECT_NEAR(zeros, 2500, 200);
  auto again = run(source, {ones, HostTensor::i32({}, {7})});
  EXPECT_EQ(again[1].data, r[1].data); // deterministic
  auto other = run(source, {ones, HostTensor::i32({}, {8})});
  EXPECT_NE(other[1].data, r[1].data); // the seed matters
}

// A rank's share of a data-parallel batch: rows r*b .. (r+1)*b - 1 of a
// batch-(N*b) dropout (offset 0) are the batch-b dropout with sample offset
// r*b, bit for bit, for every rank; a sample of 35 elements puts the ranks'
// first elements inside groups of four.
TEST_F(InterpreterTest, DropoutSampleOffsetGivesTheGlobalBatchsRows) {
  constexpr int64_t kRanks = 4, kBatch = 3, kSample = 5 * 7;
  auto source = [](int64_t batch) {
    std::string t = "tensor<" + std::to_string(batch) + "x5x7xf32>";
    return "func.func @f(%x: " + t + ", %s: tensor<i32>, %o: tensor<i32>) -> " + t +
           " {\n  %y = tf.dropout %x, %s sample_offset %o sample_size 35 rate 0.5 key 2 training : " +
           t + "\n  return %y : " + t + "\n}";
  };
  std::vector<double> all(size_t(kRanks * kBatch * kSample));
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = double(i + 1);
  auto whole = run(source(kRanks * kBatch), {HostTensor::f32({kRanks * kBatch, 5, 7}, all),
                                             HostTensor::i32({}, {11}), HostTensor::i32({}, {0})});
  ASSERT_EQ(whole.size(), 1u);
  int dropped = 0;
  for (double v : whole[0].data)
    dropped += v == 0.0;
  EXPECT_GT(dropped, 0);
  for (int64_t r = 0; r < kRanks; ++r) {
    auto begin = all.begin() + r * kBatch * kSample;
    std::vector<double> rows(begin, begin + kBatch * kSample);
    auto share = run(source(kBatch), {HostTensor::f32({kBatch, 5, 7}, rows),
                                      HostTensor::i32({}, {11}),
                                      HostTensor::i32({}, {double(r * kBatch)})});
    ASSERT_EQ(share.size(), 1u);
    auto wholeBegin = whole[0].data.begin() + r * kBatch * kSample;
    EXPECT_EQ(share[0].data, std::vector<double>(wholeBegin, wholeBegin + kBatch * kSample))
        << "rank " << r;
  }
  // Without the offset every rank would draw rank 0's masks.
  std::vector<double> rank1(all.begin() + kBatch * kSample, all.begin() + 2 * kBatch * kSample);
  auto unshifted = run(source(kBatch), {HostTensor::f32({kBatch, 5, 7}, rank1),
                                        HostTensor::i32({}, {11}), HostTensor::i32({}, {0})});
  auto wholeBegin = whole[0].data.begin() + kBatch * kSample;
  EXPECT_NE(unshifted[0].data, std::vector<double>(wholeBegin, wholeBegin + kBatch * kSample));
}

TEST_F(InterpreterTest, Conv1dPaddingAndBias) {
  auto r = run(R"(
    func.func @f(%x: tensor<1x1x3xf32>, %w: tensor<2x1x2xf32>, %b: tensor<2xf32>) -> tensor<1x2x4xf32> {
      %0 = tf.conv1d %x, %w, %b padding 1 : tensor<1x1x3xf32>, tensor<2x1x2xf32>, tensor<2xf32> -> tensor<1x2x4xf32>
      return %0 : tensor<1x2x4xf32>
    })",
               {HostTensor::f32({1, 1, 3}, {1, 2, 3}), HostTensor::f32({2, 1, 2}, {1, 10, -1, 0}),
                HostTensor::f32({2}, {0.5, 0})});
  // Padded input [0, 1, 2, 3, 0]; channel 0 kernel (1, 10), channel 1 (-1, 0).
  expectNear(r[0], {1, 2, 4}, {10.5, 21.5, 32.5, 3.5, 0, -1, -2, -3}, 1e-12);
}

TEST_F(InterpreterTest, OneHotGatherCrossEntropyMse) {
  auto r = run(R"(
    func.func @f(%ids: tensor<2xi32>, %table: tensor<3x2xf32>, %logits: tensor<2x3xf32>, %a: tensor<2xf32>, %b: tensor<2xf32>)
        -> (tensor<2x3xf32>, tensor<2x2xf32>, tensor<f32>, tensor<f32>) {
      %o = tf.one_hot %ids depth 3 : tensor<2xi32> -> tensor<2x3xf32>
      %g = tf.gather %table, %ids : tensor<3x2xf32>, tensor<2xi32> -> tensor<2x2xf32>
      %c = tf.cross_entropy %logits, %ids axis 1 : tensor<2x3xf32>, tensor<2xi32>
      %m = tf.mse %a, %b : tensor<2xf32>
      return %o, %g, %c, %m : tensor<2x3xf32>, tensor<2x2xf32>, tensor<f32>, tensor<f32>
    })",
               {HostTensor::i32({2}, {2, 0}), HostTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6}),
                HostTensor::f32({2, 3}, {0, 0, 0, 1, 0, 0}), HostTensor::f32({2}, {1, 2}),
                HostTensor::f32({2}, {0, 4})});
  expectNear(r[0], {2, 3}, {0, 0, 1, 1, 0, 0}, 0);
  expectNear(r[1], {2, 2}, {5, 6, 1, 2}, 0);
  // Row 0: -log(1/3); row 1: -log(e / (e + 2)).
  double expected = (std::log(3.0) + std::log((std::exp(1.0) + 2) / std::exp(1.0))) / 2;
  expectNear(r[2], {}, {expected}, 1e-12);
  expectNear(r[3], {}, {2.5}, 1e-12);
}

TEST_F(InterpreterTest, GatherOfColumnsReadsTheTableTransposed) {
  // table [2, 3] = [[1, 2, 3], [4, 5, 6]]: id 2 reads column (3, 6).
  auto r = run(R"(
    func.func @f(%ids: tensor<2xi32>, %table: tensor<2x3xf32>) -> tensor<2x2xf32> {
      %g = tf.gather %table, %ids columns : tensor<2x3xf32>, tensor<2xi32> -> tensor<2x2xf32>
      return %g : tensor<2x2xf32>
    })",
               {HostTensor::i32({2}, {2, 0}), HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  expectNear(r[0], {2, 2}, {3, 6, 1, 4}, 0);
}

TEST_F(InterpreterTest, CrossEntropyOverMiddleAxis) {
  // Class axis 1 of [1, 2, 2]: positions (0, :, 0) and (0, :, 1).
  auto r = run(R"(
    func.func @f(%logits: tensor<1x2x2xf32>, %labels: tensor<1x2xi32>) -> tensor<f32> {
      %c = tf.cross_entropy %logits, %labels axis 1 : tensor<1x2x2xf32>, tensor<1x2xi32>
      return %c : tensor<f32>
    })",
               {HostTensor::f32({1, 2, 2}, {0, 5, 0, 5}), HostTensor::i32({1, 2}, {1, 0})});
  // Position 0: logits (0, 0), label 1 -> ln 2; position 1: (5, 5) -> ln 2.
  expectNear(r[0], {}, {std::log(2.0)}, 1e-12);
}

TEST_F(InterpreterTest, Errors) {
  const char *source = R"(
    func.func @f(%ids: tensor<2xi32>) -> tensor<2x3xf32> {
      %o = tf.one_hot %ids depth 3 : tensor<2xi32> -> tensor<2x3xf32>
      return %o : tensor<2x3xf32>
    })";
  EXPECT_NE(runError(source, {}).find("takes 1 arguments, got 0"), std::string::npos);
  std::string shape = runError(source, {HostTensor::i32({3}, {0, 1, 2})});
  EXPECT_NE(shape.find("must be i32 [2], got i32 [3]"), std::string::npos) << shape;
  std::string range = runError(source, {HostTensor::i32({2}, {0, 3})});
  EXPECT_NE(range.find("index 3 is out of range [0, 3)"), std::string::npos) << range;
}

} // namespace
