//===- DatasetsTest.cpp - the built-in datasets and batching --------------===//
//
// Each dataset's task invariant checked on its samples (reversed labels,
// one anomaly per set, per-kind mean heights, corners in cyclic order,
// targets one byte ahead, labels exactly at the masked tokens, the shape of
// an image's class), determinism and split independence, epoch orders,
// batch padding, and the file readers (npy, text) with their errors.
//
//===----------------------------------------------------------------------===//

#include "runtime/Datasets.h"
#include "runtime/Tensor.h"
#include "runtime/ThreadPool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

using namespace tfc::rt;
using ::testing::HasSubstr;

namespace {

TensorSpec input(const std::string &name, DType dtype, std::vector<int64_t> shape) {
  TensorSpec s;
  s.kind = tfc::abi::ValueKind::Input;
  s.name = name;
  s.dtype = dtype;
  s.shape = std::move(shape);
  return s;
}

// The inputs of the models in models/, at a small batch.
std::vector<TensorSpec> reverseInputs(int64_t batch = 4, int64_t seq = 16) {
  return {input("tokens", DType::I32, {batch, seq}), input("labels", DType::I32, {batch, seq})};
}
std::vector<TensorSpec> anomalyInputs(int64_t batch = 4, int64_t set = 10, int64_t features = 512) {
  return {input("features", DType::F32, {batch, set, features}),
          input("labels", DType::I32, {batch})};
}
std::vector<TensorSpec> fleuretInputs(int64_t batch = 4, int64_t length = 100) {
  return {input("input", DType::F32, {batch, 1, length}),
          input("target", DType::F32, {batch, 1, length})};
}
std::vector<TensorSpec> squareInputs(int64_t batch = 4) {
  return {input("source", DType::F32, {batch, 2, 2}), input("target", DType::F32, {batch, 2, 2})};
}

Dataset make(const std::string &name, const DataArgs &args, uint64_t seed,
             const std::vector<TensorSpec> &inputs) {
  Dataset d;
  std::string error;
  EXPECT_TRUE(makeDataset(name, args, seed, inputs, d, error)) << error;
  return d;
}

std::string makeError(const std::string &name, const DataArgs &args,
                      const std::vector<TensorSpec> &inputs) {
  Dataset d;
  std::string error;
  EXPECT_FALSE(makeDataset(name, args, 1, inputs, d, error)) << name;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error;
}

/// Samples [begin, begin + n) of `split`, batch by batch, as one batch of n.
std::vector<Tensor> samples(const Split &split, std::vector<TensorSpec> inputs, int64_t n,
                            int64_t begin = 0) {
  for (TensorSpec &in : inputs)
    in.shape[0] = n;
  std::vector<Tensor> batch;
  EXPECT_EQ(fillBatch(split, inputs, nullptr, begin, n, batch), n);
  return batch;
}

/// The bytes of sample `row` of `t`.
std::vector<uint8_t> rowBytes(const Tensor &t, int64_t row) {
  size_t n = t.bytes.size() / size_t(t.shape[0]);
  return std::vector<uint8_t>(t.bytes.begin() + row * n, t.bytes.begin() + (row + 1) * n);
}

//===----------------------------------------------------------------------===//
// reverse_sequences
//===----------------------------------------------------------------------===//

TEST(Datasets, ReverseLabelsAreTheReversedTokens) {
  Dataset d = make("reverse_sequences", {{"classes", int64_t(7)}, {"train", int64_t(300)}}, 42,
                   reverseInputs());
  EXPECT_EQ(d.train.samples, 300);
  EXPECT_EQ(d.val.samples, 1000); // the tutorial's sizes by default
  EXPECT_EQ(d.test.samples, 10000);
  std::vector<Tensor> b = samples(d.train, reverseInputs(), 300);
  std::vector<int64_t> counts(7, 0);
  for (int64_t r = 0; r < 300; ++r)
    for (int64_t j = 0; j < 16; ++j) {
      int32_t token = b[0].i32()[r * 16 + j];
      ASSERT_GE(token, 0);
      ASSERT_LT(token, 7);
      ++counts[size_t(token)];
      ASSERT_EQ(b[1].i32()[r * 16 + 15 - j], token) << "sample " << r << " position " << j;
    }
  for (int64_t c : counts) // 4,800 tokens: about 686 each
    EXPECT_NEAR(double(c), 4800.0 / 7, 100);
}

TEST(Datasets, ReverseIsDeterministicAndSplitsIndependent) {
  DataArgs args = {{"train", int64_t(50)}, {"val", int64_t(20)}, {"test", int64_t(30)}};
  Dataset a = make("reverse_sequences", args, 7, reverseInputs());
  Dataset b = make("reverse_sequences", args, 7, reverseInputs());
  Dataset other = make("reverse_sequences", args, 8, reverseInputs());
  args["train"] = int64_t(80);
  Dataset moreTrain = make("reverse_sequences", args, 7, reverseInputs());

  auto train = samples(a.train, reverseInputs(), 50);
  EXPECT_EQ(train[0].bytes, samples(b.train, reverseInputs(), 50)[0].bytes);
  EXPECT_NE(train[0].bytes, samples(other.train, reverseInputs(), 50)[0].bytes);
  auto test = samples(a.test, reverseInputs(), 30);
  EXPECT_EQ(test[0].bytes, samples(moreTrain.test, reverseInputs(), 30)[0].bytes);
  EXPECT_EQ(train[0].bytes, samples(moreTrain.train, reverseInputs(), 50)[0].bytes);
  // The splits are different streams.
  EXPECT_NE(rowBytes(train[0], 0), rowBytes(test[0], 0));
  EXPECT_NE(rowBytes(samples(a.val, reverseInputs(), 1)[0], 0), rowBytes(train[0], 0));
  // A sample does not depend on the calls before it.
  auto late = samples(a.train, reverseInputs(), 1, 17);
  EXPECT_EQ(rowBytes(late[0], 0), rowBytes(train[0], 17));
}

//===----------------------------------------------------------------------===//
// Arguments and shapes
//===----------------------------------------------------------------------===//

TEST(Datasets, ArgumentErrors) {
  EXPECT_THAT(makeError("mnist", {}, reverseInputs()), HasSubstr("unknown dataset 'mnist'"));
  std::string e = makeError("reverse_sequences", {{"clases", int64_t(3)}}, reverseInputs());
  EXPECT_THAT(e, HasSubstr("no argument 'clases'"));
  EXPECT_THAT(e, HasSubstr("classes, seq, train, val, test"));
  EXPECT_THAT(makeError("reverse_sequences", {{"train", std::string("many")}}, reverseInputs()),
              HasSubstr("argument 'train' of dataset 'reverse_sequences' must be an integer >= 0, "
                        "not \"many\""));
  EXPECT_THAT(makeError("reverse_sequences", {{"val", 2.5}}, reverseInputs()),
              HasSubstr("not 2.5"));
  EXPECT_THAT(makeError("reverse_sequences", {{"test", int64_t(-1)}}, reverseInputs()),
              HasSubstr("must be an integer >= 0"));
  EXPECT_THAT(makeError("reverse_sequences", {{"classes", int64_t(0)}}, reverseInputs()),
              HasSubstr("'classes' of dataset 'reverse_sequences' must be an integer >= 1"));
  EXPECT_THAT(makeError("reverse_sequences", {{"train", int64_t(0)}}, reverseInputs()),
              HasSubstr("at least one training sample"));
  EXPECT_THAT(makeError("square_corners", {{"noise", true}}, squareInputs()),
              HasSubstr("'noise' of dataset 'square_corners' must be a number >= 0, not true"));
  EXPECT_THAT(makeError("set_anomaly", {{"dir", int64_t(3)}}, anomalyInputs()),
              HasSubstr("must be a string"));
  // An integral double is an integer.
  Dataset d = make("reverse_sequences", {{"train", 12.0}}, 1, reverseInputs());
  EXPECT_EQ(d.train.samples, 12);
}

TEST(Datasets, InputMismatchesNameBothShapes) {
  // seq: 8 against a model reading 16 tokens.
  std::string e = makeError("reverse_sequences", {{"seq", int64_t(8)}}, reverseInputs());
  EXPECT_THAT(e, HasSubstr("gives its tokens as i32[8] per sample"));
  EXPECT_THAT(e, HasSubstr("input 1 'tokens' is i32[4, 16] (per sample i32[16])"));
  // Labels of another length.
  std::vector<TensorSpec> in = reverseInputs();
  in[1].shape = {4, 15};
  e = makeError("reverse_sequences", {}, in);
  EXPECT_THAT(e, HasSubstr("labels as i32[16]"));
  EXPECT_THAT(e, HasSubstr("input 2 'labels' is i32[4, 15]"));
  // A dtype mismatch.
  in = squareInputs();
  in[1].dtype = DType::I32;
  EXPECT_THAT(makeError("square_corners", {}, in),
              HasSubstr("target as f32[2, 2] per sample, but the model's input 2 'target' is "
                        "i32[4, 2, 2]"));
  // Input count.
  in = reverseInputs();
  in.push_back(input("mask", DType::Bool, {4, 16}));
  e = makeError("reverse_sequences", {}, in);
  EXPECT_THAT(e, HasSubstr("gives 2 arrays (tokens i32[16], labels i32[16])"));
  EXPECT_THAT(e, HasSubstr("the model has 3 inputs (tokens, labels, mask)"));
  // fleuret's target must have the input's length.
  in = fleuretInputs();
  in[1].shape = {4, 1, 50};
  EXPECT_THAT(makeError("fleuret_sequences", {}, in),
              HasSubstr("target as f32[1, 100] per sample, but the model's input 2 'target' is "
                        "f32[4, 1, 50]"));
  EXPECT_THAT(makeError("set_anomaly", {{"features", int64_t(256)}}, anomalyInputs()),
              HasSubstr("sets as f32[10, 256] per sample"));
}

//===----------------------------------------------------------------------===//
// set_anomaly
//===----------------------------------------------------------------------===//

/// Rows of one set (each `features` floats).
std::vector<std::vector<float>> setRows(const Tensor &t, int64_t sample, int64_t set,
                                        int64_t features) {
  std::vector<std::vector<float>> rows;
  const float *p = t.f32() + sample * set * features;
  for (int64_t i = 0; i < set; ++i)
    rows.emplace_back(p + i * features, p + (i + 1) * features);
  return rows;
}

TEST(Datasets, SetAnomalyHasOneAnomalyAndTheLabelPointsAtIt) {
  // Without noise every image is its class' prototype: nine equal rows and
  // the anomaly.
  const int64_t classes = 20, set = 10, features = 64, n = 400;
  auto in = anomalyInputs(4, set, features);
  DataArgs args = {{"classes", classes}, {"noise", 0.0}, {"train", n}};
  Dataset d = make("set_anomaly", args, 3, in);
  auto b = samples(d.train, in, n);
  std::vector<int64_t> positions(set, 0);
  std::vector<std::vector<float>> anomalyOfClass(classes);
  for (int64_t s = 0; s < n; ++s) {
    auto rows = setRows(b[0], s, set, features);
    int32_t label = b[1].i32()[s];
    ASSERT_GE(label, 0);
    ASSERT_LT(label, set);
    ++positions[size_t(label)];
    const std::vector<float> &normal = rows[label == 0 ? 1 : 0];
    for (int64_t i = 0; i < set; ++i)
      if (i == label)
        ASSERT_NE(rows[size_t(i)], normal) << "sample " << s;
      else
        ASSERT_EQ(rows[size_t(i)], normal) << "sample " << s << " row " << i;
    // Sample s's anomaly is image s, of class s % classes (each image is
    // once the anomaly, as in the tutorial).
    std::vector<float> &seen = anomalyOfClass[size_t(s % classes)];
    if (seen.empty())
      seen = rows[size_t(label)];
    ASSERT_EQ(rows[size_t(label)], seen) << "sample " << s;
  }
  for (int64_t c : positions) // 40 on average
    EXPECT_GT(c, 15);
  for (int64_t c = 1; c < classes; ++c)
    EXPECT_NE(anomalyOfClass[size_t(c)], anomalyOfClass[0]);
}

TEST(Datasets, SetAnomalyIsLearnableButNotTrivial) {
  // At the default noise, picking the image farthest from the mean of the
  // others (no learning) finds most anomalies but far from all; features
  // have unit variance.
  const int64_t set = 10, features = 512, n = 300;
  auto in = anomalyInputs(4, set, features);
  Dataset d = make("set_anomaly", {{"train", int64_t(900)}, {"test", int64_t(1000)}}, 42, in);
  auto b = samples(d.test, in, n);
  int64_t found = 0;
  double sum = 0, squares = 0;
  for (int64_t s = 0; s < n; ++s) {
    auto rows = setRows(b[0], s, set, features);
    int64_t best = -1;
    double bestDistance = -1;
    for (int64_t i = 0; i < set; ++i) {
      double distance = 0;
      for (int64_t j = 0; j < features; ++j) {
        double mean = 0;
        for (int64_t k = 0; k < set; ++k)
          if (k != i)
            mean += rows[size_t(k)][size_t(j)];
        mean /= double(set - 1);
        distance += std::pow(rows[size_t(i)][size_t(j)] - mean, 2);
        sum += rows[size_t(i)][size_t(j)];
        squares += std::pow(rows[size_t(i)][size_t(j)], 2);
      }
      if (distance > bestDistance) {
        bestDistance = distance;
        best = i;
      }
    }
    found += best == b[1].i32()[s];
  }
  double accuracy = double(found) / n, count = double(n * set * features);
  EXPECT_GT(accuracy, 0.55);
  EXPECT_LT(accuracy, 0.85);
  EXPECT_NEAR(sum / count, 0.0, 0.1);
  EXPECT_NEAR(squares / count, 1.0, 0.2);
}

TEST(Datasets, SetAnomalyDeterministicAndSplitsIndependent) {
  const int64_t set = 10, features = 32;
  auto in = anomalyInputs(4, set, features);
  DataArgs args = {{"classes", int64_t(10)}, {"features", features}, {"train", int64_t(100)},
                   {"val", int64_t(100)},    {"test", int64_t(100)}};
  Dataset a = make("set_anomaly", args, 5, in), same = make("set_anomaly", args, 5, in);
  Dataset other = make("set_anomaly", args, 6, in);
  args["train"] = int64_t(200);
  Dataset moreTrain = make("set_anomaly", args, 5, in);
  auto test = samples(a.test, in, 100);
  EXPECT_EQ(test[0].bytes, samples(same.test, in, 100)[0].bytes);
  EXPECT_EQ(test[1].bytes, samples(same.test, in, 100)[1].bytes);
  EXPECT_EQ(test[0].bytes, samples(moreTrain.test, in, 100)[0].bytes);
  EXPECT_EQ(test[1].bytes, samples(moreTrain.test, in, 100)[1].bytes);
  EXPECT_NE(test[0].bytes, samples(other.test, in, 100)[0].bytes);
  EXPECT_NE(test[0].bytes, samples(a.val, in, 100)[0].bytes);
}

TEST(Datasets, SetAnomalyErrors) {
  // 500 images over 100 classes: 5 per class, a set needs 9.
  EXPECT_THAT(makeError("set_anomaly", {{"train", int64_t(500)}}, anomalyInputs()),
              HasSubstr("split 'train' (500 images over 100 classes) has 0 classes with at least "
                        "set-1 = 9 images"));
  EXPECT_THAT(makeError("set_anomaly", {{"set", int64_t(1)}}, anomalyInputs(4, 1)),
              HasSubstr("sets of at least 2"));
  EXPECT_THAT(makeError("set_anomaly", {{"classes", int64_t(1)}}, anomalyInputs()),
              HasSubstr("at least 2 classes"));
}

//===----------------------------------------------------------------------===//
// Files: a temporary directory per test
//===----------------------------------------------------------------------===//

class DatasetsFiles : public ::testing::Test {
protected:
  std::string dir;
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "tfc_datasets_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    ASSERT_NE(::mkdtemp(buf.data()), nullptr);
    dir = buf.data();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  void write(const std::string &path, const Tensor &t) {
    std::filesystem::create_directories(std::filesystem::path(dir + "/" + path).parent_path());
    std::string error;
    ASSERT_TRUE(writeNpy(dir + "/" + path, t, error)) << error;
  }
  void writeText(const std::string &path, const std::string &text) {
    std::filesystem::create_directories(std::filesystem::path(dir + "/" + path).parent_path());
    std::ofstream(dir + "/" + path, std::ios::binary) << text;
  }
};

TEST_F(DatasetsFiles, SetAnomalyFromRealFeatures) {
  // 4 features per image: its index, its class, then zeros; three classes of
  // four training images, six validation images, no test split.
  const int64_t set = 4, features = 4;
  auto writeSplit = [&](const std::string &split, int64_t images) {
    Tensor f(DType::F32, {images, features}), l(DType::I32, {images});
    for (int64_t i = 0; i < images; ++i) {
      l.i32()[i] = int32_t(i % 3);
      f.f32()[i * features] = float(i);
      f.f32()[i * features + 1] = float(i % 3);
    }
    write(split + "/features.npy", f);
    write(split + "/labels.npy", l);
  };
  writeSplit("train", 12);
  writeSplit("val", 9);
  auto in = anomalyInputs(4, set, features);
  Dataset d = make("set_anomaly", {{"dir", dir}}, 9, in);
  EXPECT_EQ(d.train.samples, 12);
  EXPECT_EQ(d.val.samples, 9);
  EXPECT_EQ(d.test.samples, 0);
  EXPECT_EQ(d.notices, std::vector<std::string>{"no test split in " + dir + ": skipped"});
  for (const Split *split : {&d.train, &d.val}) {
    auto b = samples(*split, in, split->samples);
    for (int64_t s = 0; s < split->samples; ++s) {
      auto rows = setRows(b[0], s, set, features);
      int32_t label = b[1].i32()[s];
      EXPECT_EQ(rows[size_t(label)][0], float(s)); // image s is sample s's anomaly
      std::set<float> others, classes;
      for (int64_t i = 0; i < set; ++i)
        if (i != label) {
          others.insert(rows[size_t(i)][0]);
          classes.insert(rows[size_t(i)][1]);
        }
      EXPECT_EQ(others.size(), size_t(set - 1)) << "distinct images";
      ASSERT_EQ(classes.size(), 1u) << "one class";
      EXPECT_NE(*classes.begin(), rows[size_t(label)][1]) << "another class";
    }
  }
  // Sizes given must match the files; a mismatched features width is named.
  EXPECT_THAT(makeError("set_anomaly", {{"dir", dir}, {"train", int64_t(45000)}}, in),
              HasSubstr("train: 45000 but '" + dir + "/train' holds 12 images"));
  EXPECT_THAT(makeError("set_anomaly", {{"dir", dir}}, anomalyInputs(4, set, 5)),
              HasSubstr("features.npy' is f32[12, 4]; set_anomaly needs f32[images, 5]"));
  EXPECT_THAT(makeError("set_anomaly", {{"dir", dir}, {"classes", int64_t(2)}}, in),
              HasSubstr("holds class 2, outside [0, 2)"));
  EXPECT_THAT(makeError("set_anomaly", {{"dir", dir + "/nowhere"}}, in),
              HasSubstr("no training split"));
}

//===----------------------------------------------------------------------===//
// fleuret_sequences
//===----------------------------------------------------------------------===//

// The blog's shapes, written out again here.
double triangle(const FleuretShape &s, int64_t t) {
  double v = s.height - std::max(0.0, std::fabs(double(t) - s.position) - 0.5) * 2 * s.height /
                            s.width;
  return std::max(0.0, v);
}
bool inBox(const FleuretShape &s, int64_t t) { return std::fabs(double(t) - s.position) < s.width / 2; }

TEST(Datasets, FleuretTargetsAreTheMeanHeightsOfEachKind) {
  const int64_t length = 100;
  for (int64_t i = 0; i < 200; ++i) {
    SCOPED_TRACE(i);
    FleuretSample s = fleuretSample(42, "train", i, length, 0.0);
    ASSERT_EQ(s.input.size(), size_t(length));
    ASSERT_EQ(s.target.size(), size_t(length));
    // The generator's ranges and its validity test.
    for (const FleuretShape *shape :
         {&s.triangles[0], &s.triangles[1], &s.boxes[0], &s.boxes[1]}) {
      EXPECT_GE(shape->position, 5.5);
      EXPECT_LE(shape->position, length - 5.5);
      EXPECT_GE(shape->height, 1.0);
      EXPECT_LE(shape->height, 25.0);
      EXPECT_GE(shape->width, 5.0);
      EXPECT_LE(shape->width, 11.0);
    }
    EXPECT_GT(std::fabs(s.triangles[0].height - s.triangles[1].height), 4.0);
    double meanTriangle = (s.triangles[0].height + s.triangles[1].height) / 2;
    double meanBox = (s.boxes[0].height + s.boxes[1].height) / 2;
    std::vector<int> owners(length, 0);
    for (int64_t t = 0; t < length; ++t) {
      double input = 0, target = 0;
      int owner = 0, shapes = 0;
      for (int k = 0; k < 2; ++k) {
        shapes += (triangle(s.triangles[k], t) > 0) + inBox(s.boxes[k], t);
        if (triangle(s.triangles[k], t) > 0) {
          input = std::max(input, triangle(s.triangles[k], t));
          FleuretShape m = s.triangles[k];
          m.height = meanTriangle;
          target = std::max(target, triangle(m, t));
          owner = 1 + k;
        }
        if (inBox(s.boxes[k], t)) {
          input = std::max(input, s.boxes[k].height);
          target = std::max(target, meanBox); // a box is flat at its kind's mean
          owner = 3 + k;
        }
      }
      EXPECT_LE(shapes, 1) << "t " << t;
      owners[size_t(t)] = owner;
      EXPECT_NEAR(s.input[size_t(t)], input, 1e-12) << "t " << t;
      EXPECT_NEAR(s.target[size_t(t)], target, 1e-12) << "t " << t;
      if (owner == 0) { // background
        EXPECT_EQ(s.target[size_t(t)], 0.0);
      }
    }
    // No two shapes touch: between two shapes' steps lies at least one
    // background step.
    for (int64_t t = 0; t + 1 < length; ++t)
      if (owners[size_t(t)] && owners[size_t(t + 1)]) {
        EXPECT_EQ(owners[size_t(t)], owners[size_t(t + 1)]) << "t " << t;
      }
    // fleuretProfile is the input's definition.
    EXPECT_EQ(fleuretProfile(s.triangles, s.boxes, length), s.input);
  }
}

TEST(Datasets, FleuretNoiseAndDeterminism) {
  FleuretSample clean = fleuretSample(1, "val", 3, 100, 0.0);
  FleuretSample noisy = fleuretSample(1, "val", 3, 100, 0.3);
  double largest = 0;
  for (size_t t = 0; t < 100; ++t) {
    for (double d : {noisy.input[t] - clean.input[t], noisy.target[t] - clean.target[t]}) {
      EXPECT_GE(d, -0.15);
      EXPECT_LT(d, 0.15);
      largest = std::max(largest, std::fabs(d));
    }
  }
  EXPECT_GT(largest, 0.1); // there is noise
  FleuretSample again = fleuretSample(1, "val", 3, 100, 0.3);
  EXPECT_EQ(again.input, noisy.input);
  EXPECT_EQ(again.target, noisy.target);
  EXPECT_NE(fleuretSample(2, "val", 3, 100, 0.3).input, noisy.input);
  EXPECT_NE(fleuretSample(1, "test", 3, 100, 0.3).input, noisy.input);
  EXPECT_NE(fleuretSample(1, "val", 4, 100, 0.3).input, noisy.input);
}

TEST(Datasets, FleuretIsNormalisedByTheTrainingSplit) {
  const int64_t length = 100, train = 60;
  auto in = fleuretInputs(4, length);
  Dataset d = make("fleuret_sequences", {{"train", train}, {"val", int64_t(5)}, {"test", int64_t(7)}},
                   11, in);
  EXPECT_EQ(d.test.samples, 7);
  double sum = 0, squares = 0, n = 0;
  for (int64_t i = 0; i < train; ++i) {
    FleuretSample s = fleuretSample(11, "train", i, length, 0.3);
    for (const auto *v : {&s.input, &s.target})
      for (double x : *v) {
        sum += x;
        squares += x * x;
        ++n;
      }
  }
  double mean = sum / n, std = std::sqrt((squares - n * mean * mean) / (n - 1));
  auto test = samples(d.test, in, 7);
  for (int64_t i = 0; i < 7; ++i) {
    FleuretSample s = fleuretSample(11, "test", i, length, 0.3);
    for (int64_t t = 0; t < length; ++t) {
      ASSERT_NEAR(test[0].f32()[i * length + t], (s.input[size_t(t)] - mean) / std, 1e-5);
      ASSERT_NEAR(test[1].f32()[i * length + t], (s.target[size_t(t)] - mean) / std, 1e-5);
    }
  }
  // Normalised training values: mean 0, std 1.
  auto tr = samples(d.train, in, train);
  double nsum = 0, nsquares = 0;
  for (const Tensor &t : tr)
    for (int64_t i = 0; i < t.numel(); ++i) {
      nsum += t.f32()[i];
      nsquares += double(t.f32()[i]) * t.f32()[i];
    }
  EXPECT_NEAR(nsum / n, 0.0, 1e-4);
  EXPECT_NEAR(nsquares / (n - 1), 1.0, 1e-3);
}

//===----------------------------------------------------------------------===//
// square_corners
//===----------------------------------------------------------------------===//

/// The corner (-1, -1), (-1, 1), (1, 1), (1, -1) nearest to (x, y), and how far.
int nearestCorner(float x, float y, double &distance) {
  static const double corners[4][2] = {{-1, -1}, {-1, 1}, {1, 1}, {1, -1}};
  int best = 0;
  distance = 1e9;
  for (int c = 0; c < 4; ++c) {
    double d = std::hypot(x - corners[c][0], y - corners[c][1]);
    if (d < distance) {
      distance = d;
      best = c;
    }
  }
  return best;
}

TEST(Datasets, SquareCornersGoAroundTheSquare) {
  for (double noise : {0.0, 0.1}) {
    SCOPED_TRACE(noise);
    DataArgs args = {};
    if (noise == 0.0)
      args["noise"] = 0.0;
    Dataset d = make("square_corners", args, 13, squareInputs());
    EXPECT_EQ(d.train.samples, 256); // the book's sizes
    EXPECT_EQ(d.val.samples, 128);
    EXPECT_EQ(d.test.samples, 0);
    auto b = samples(d.train, squareInputs(), 256);
    std::set<std::pair<int, int>> starts; // (first corner, direction)
    double squaredNoise = 0;
    for (int64_t s = 0; s < 256; ++s) {
      int corner[4];
      for (int i = 0; i < 4; ++i) {
        const float *p = b[i / 2].f32() + s * 4 + (i % 2) * 2;
        double distance;
        corner[i] = nearestCorner(p[0], p[1], distance);
        ASSERT_LT(distance, 0.6);
        if (noise == 0.0) {
          ASSERT_EQ(distance, 0.0);
        }
        squaredNoise += distance * distance;
      }
      int step = (corner[1] - corner[0] + 4) % 4;
      ASSERT_TRUE(step == 1 || step == 3) << "sample " << s;
      for (int i = 1; i < 4; ++i)
        ASSERT_EQ((corner[i] - corner[i - 1] + 4) % 4, step) << "sample " << s;
      starts.insert({corner[0], step});
    }
    EXPECT_EQ(starts.size(), 8u); // every start, both ways
    EXPECT_NEAR(std::sqrt(squaredNoise / (256 * 4 * 2)), noise, 0.01);
  }
}

TEST(Datasets, SquareCornersSplitsIndependent) {
  Dataset a = make("square_corners", {}, 1, squareInputs());
  Dataset b = make("square_corners", {{"train", int64_t(10)}}, 1, squareInputs());
  Dataset c = make("square_corners", {}, 2, squareInputs());
  auto val = samples(a.val, squareInputs(), 128);
  EXPECT_EQ(val[0].bytes, samples(b.val, squareInputs(), 128)[0].bytes);
  EXPECT_EQ(val[1].bytes, samples(b.val, squareInputs(), 128)[1].bytes);
  EXPECT_NE(val[0].bytes, samples(c.val, squareInputs(), 128)[0].bytes);
  EXPECT_NE(rowBytes(val[0], 0), rowBytes(samples(a.train, squareInputs(), 1)[0], 0));
}

//===----------------------------------------------------------------------===//
// epochOrder and fillBatch
//===----------------------------------------------------------------------===//

TEST(Datasets, EpochOrderIsAPermutationPerEpoch) {
  std::vector<int64_t> e0 = epochOrder(1000, 42, 0), e1 = epochOrder(1000, 42, 1);
  std::vector<int64_t> sorted = e0, identity(1000);
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i)
    identity[size_t(i)] = i;
  EXPECT_EQ(sorted, identity);
  sorted = e1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(e0, e1);
  EXPECT_NE(e0, identity);
  EXPECT_EQ(e0, epochOrder(1000, 42, 0));
  EXPECT_NE(e0, epochOrder(1000, 43, 0));
  EXPECT_TRUE(epochOrder(0, 1, 0).empty());
  EXPECT_EQ(epochOrder(1, 1, 5), std::vector<int64_t>{0});
  // Each position takes many values over epochs (not a fixed rotation).
  std::set<int64_t> firsts;
  for (int64_t e = 0; e < 50; ++e)
    firsts.insert(epochOrder(1000, 42, e)[0]);
  EXPECT_GT(firsts.size(), 40u);
}

TEST(Datasets, FillBatchPadsWithZerosAndCountsRealRows) {
  auto in = reverseInputs(8);
  Dataset d = make("reverse_sequences", {{"classes", int64_t(10)}, {"train", int64_t(21)}}, 3, in);
  std::vector<Tensor> batch;
  // A stale batch of other shapes is reallocated.
  batch.emplace_back(DType::F32, std::vector<int64_t>{3});
  std::vector<int64_t> order = epochOrder(21, 3, 0);
  EXPECT_EQ(fillBatch(d.train, in, &order, 16, 8, batch), 5); // the order ends
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].shape, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(batch[1].dtype, DType::I32);
  auto all = samples(d.train, in, 21);
  for (int64_t r = 0; r < 8; ++r)
    for (int i = 0; i < 2; ++i) {
      if (r < 5)
        EXPECT_EQ(rowBytes(batch[size_t(i)], r), rowBytes(all[size_t(i)], order[size_t(16 + r)]));
      else
        EXPECT_EQ(rowBytes(batch[size_t(i)], r), std::vector<uint8_t>(64, 0)) << "row " << r;
    }
  // count below the batch: zero rows after it, even where the batch held data.
  EXPECT_EQ(fillBatch(d.train, in, nullptr, 0, 3, batch), 3);
  EXPECT_EQ(rowBytes(batch[0], 2), rowBytes(all[0], 2));
  EXPECT_EQ(rowBytes(batch[0], 3), std::vector<uint8_t>(64, 0));
  // count above the batch: the batch's rows; past the split's end: none.
  EXPECT_EQ(fillBatch(d.train, in, nullptr, 0, 100, batch), 8);
  EXPECT_EQ(fillBatch(d.train, in, nullptr, 19, 8, batch), 2);
  EXPECT_EQ(fillBatch(d.train, in, nullptr, 21, 8, batch), 0);
  EXPECT_EQ(batch[0].bytes, std::vector<uint8_t>(8 * 16 * 4, 0));
  // An absent split.
  EXPECT_EQ(fillBatch(Split(), in, nullptr, 0, 8, batch), 0);
}

TEST(Datasets, FillBatchIsTheSameOnAnyThreadCount) {
  auto in = anomalyInputs(16, 10, 64);
  Dataset d = make("set_anomaly", {{"classes", int64_t(10)}, {"train", int64_t(100)}}, 1, in);
  std::vector<Tensor> one, three;
  std::vector<int64_t> order = epochOrder(100, 1, 2);
  setNumThreads(1);
  fillBatch(d.train, in, &order, 32, 16, one);
  setNumThreads(3);
  fillBatch(d.train, in, &order, 32, 16, three);
  setNumThreads(0);
  EXPECT_EQ(one[0].bytes, three[0].bytes);
  EXPECT_EQ(one[1].bytes, three[1].bytes);
}

//===----------------------------------------------------------------------===//
// npy
//===----------------------------------------------------------------------===//

Tensor counting(DType dtype, std::vector<int64_t> shape, int offset) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    if (dtype == DType::F32)
      t.f32()[i] = float(i + offset);
    else
      t.i32()[i] = int32_t(i + offset);
  return t;
}

TEST_F(DatasetsFiles, NpyLoadsSplitsAndSkipsAMissingOne) {
  auto in = reverseInputs(4, 3);
  write("train/tokens.npy", counting(DType::I32, {5, 3}, 0));
  write("train/labels.npy", counting(DType::I32, {5, 3}, 100));
  write("test/tokens.npy", counting(DType::I32, {2, 3}, 50));
  write("test/labels.npy", counting(DType::I32, {2, 3}, 150));
  Dataset d = make("npy", {{"dir", dir}}, 0, in);
  EXPECT_EQ(d.train.samples, 5);
  EXPECT_EQ(d.val.samples, 0);
  EXPECT_EQ(d.test.samples, 2);
  EXPECT_EQ(d.notices, std::vector<std::string>{"no val split in " + dir + ": skipped"});
  std::vector<Tensor> batch;
  std::vector<int64_t> order = {4, 0, 2, 1, 3};
  EXPECT_EQ(fillBatch(d.train, in, &order, 0, 4, batch), 4);
  EXPECT_EQ(std::vector<int32_t>(batch[0].i32(), batch[0].i32() + 6),
            (std::vector<int32_t>{12, 13, 14, 0, 1, 2}));
  EXPECT_EQ(batch[1].i32()[0], 112);
  EXPECT_EQ(fillBatch(d.test, in, nullptr, 0, 4, batch), 2);
  EXPECT_EQ(batch[1].i32()[5], 155);
  EXPECT_EQ(batch[1].i32()[6], 0);
}

TEST_F(DatasetsFiles, NpyErrors) {
  auto in = reverseInputs(4, 3);
  EXPECT_THAT(makeError("npy", {{"dir", dir}}, in),
              HasSubstr("no training split: '" + dir + "/train' is not a directory"));
  EXPECT_THAT(makeError("npy", {}, in), HasSubstr("needs dir:"));
  EXPECT_THAT(makeError("npy", {{"dir", dir}, {"shuffle", true}}, in),
              HasSubstr("no argument 'shuffle'"));
  write("train/tokens.npy", counting(DType::I32, {5, 3}, 0));
  // A missing file of an existing split.
  EXPECT_THAT(makeError("npy", {{"dir", dir}}, in),
              HasSubstr("cannot open '" + dir + "/train/labels.npy'"));
  // A per-sample shape mismatch names both shapes.
  write("train/labels.npy", counting(DType::I32, {5, 4}, 0));
  std::string e = makeError("npy", {{"dir", dir}}, in);
  EXPECT_THAT(e, HasSubstr("'" + dir + "/train/labels.npy' is i32[5, 4]"));
  EXPECT_THAT(e, HasSubstr("the model's input 'labels' is i32[4, 3]"));
  // A dtype mismatch.
  write("train/labels.npy", counting(DType::F32, {5, 3}, 0));
  EXPECT_THAT(makeError("npy", {{"dir", dir}}, in), HasSubstr("is f32[5, 3]"));
  // Sample counts must agree.
  write("train/labels.npy", counting(DType::I32, {6, 3}, 0));
  EXPECT_THAT(makeError("npy", {{"dir", dir}}, in),
              HasSubstr("labels.npy' has 6 samples but '" + dir + "/train/tokens.npy' has 5"));
  // An error in a later split too.
  write("train/labels.npy", counting(DType::I32, {5, 3}, 0));
  write("val/tokens.npy", counting(DType::I32, {2, 2}, 0));
  EXPECT_THAT(makeError("npy", {{"dir", dir}}, in), HasSubstr("val/tokens.npy' is i32[2, 2]"));
}

//===----------------------------------------------------------------------===//
// text_bytes
//===----------------------------------------------------------------------===//

std::vector<TensorSpec> textInputs(int64_t batch = 4, int64_t seq = 16) {
  return {input("tokens", DType::I32, {batch, seq}), input("targets", DType::I32, {batch, seq})};
}

/// A corpus of `n` bytes of all 256 values in which a window of 8 bytes
/// occurs once (by chance, for the mt19937 sequence: checked where it matters).
std::string distinctText(int64_t n) {
  std::mt19937 random(2024);
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += char(random() % 256);
  return s;
}

/// The window of seq+1 bytes sample `row` of `b` shows: the tokens, then the
/// last target, after checking that the targets are the tokens shifted by one.
std::string windowOf(const std::vector<Tensor> &b, int64_t row, int64_t seq) {
  std::string w;
  for (int64_t j = 0; j < seq; ++j) {
    int32_t token = b[0].i32()[row * seq + j], target = b[1].i32()[row * seq + j];
    EXPECT_TRUE(token >= 0 && token < 256 && target >= 0 && target < 256);
    if (j + 1 < seq) {
      EXPECT_EQ(target, b[0].i32()[row * seq + j + 1]) << "row " << row << " position " << j;
    }
    w += char(token);
  }
  return w + char(b[1].i32()[row * seq + seq - 1]);
}

TEST_F(DatasetsFiles, TextBytesWindowsTargetsAndSplits) {
  const int64_t seq = 16, n = 4000;
  std::string text = distinctText(n);
  writeText("corpus/b.txt", text.substr(1500));
  writeText("corpus/a.txt", text.substr(0, 1500)); // read first: paths in byte order
  auto in = textInputs(4, seq);
  Dataset d = make("text_bytes", {{"files", dir + "/corpus"}}, 5, in);
  TextSplits at = textSplits(n);
  EXPECT_EQ(at.valBegin, 3600);
  EXPECT_EQ(at.testBegin, 3800);
  EXPECT_EQ(d.train.samples, 3600 / seq); // an epoch reads about the training part
  EXPECT_EQ(d.val.samples, (200 - 1) / seq);
  EXPECT_EQ(d.test.samples, (200 - 1) / seq);
  ASSERT_EQ(d.notices.size(), 1u);
  EXPECT_EQ(d.notices[0], "text_bytes: 2 files from " + dir + "/corpus, 4,000 bytes: train 3,600 "
                          "(225 random windows an epoch), val 200 (12 windows), test 200 (12 "
                          "windows)");
  // Training windows lie wholly in the training part, at many offsets.
  auto train = samples(d.train, in, d.train.samples);
  std::set<size_t> offsets;
  for (int64_t r = 0; r < d.train.samples; ++r) {
    std::string window = windowOf(train, r, seq);
    size_t offset = text.find(window);
    ASSERT_NE(offset, std::string::npos);
    ASSERT_EQ(text.find(window, offset + 1), std::string::npos);
    ASSERT_LE(offset + seq + 1, size_t(at.valBegin)) << "row " << r;
    offsets.insert(offset);
  }
  EXPECT_GT(offsets.size(), 200u); // 225 draws of 3,584 starts
  // Validation and test windows at stride seq from their part's start: every
  // byte after the first is a target once.
  for (auto [split, begin] : {std::pair{&d.val, at.valBegin}, std::pair{&d.test, at.testBegin}}) {
    auto b = samples(*split, in, split->samples);
    for (int64_t r = 0; r < split->samples; ++r)
      EXPECT_EQ(windowOf(b, r, seq), text.substr(size_t(begin + r * seq), seq + 1));
  }
  // Fewer windows on request; more than fit is an error that says how many do.
  d = make("text_bytes", {{"files", dir + "/corpus"}, {"val", int64_t(3)}, {"train", int64_t(7)}},
           5, in);
  EXPECT_EQ(d.val.samples, 3);
  EXPECT_EQ(d.train.samples, 7);
  EXPECT_EQ(d.test.samples, 12);
  EXPECT_THAT(makeError("text_bytes", {{"files", dir + "/corpus"}, {"test", int64_t(13)}}, in),
              HasSubstr("test: 13 windows, but the test part (200 bytes) holds 12 windows of 17 "
                        "bytes at stride 16"));
}

TEST_F(DatasetsFiles, TextBytesIsDeterministicAndSplitsIndependent) {
  writeText("t.txt", distinctText(3000));
  auto in = textInputs(4, 8);
  DataArgs args = {{"files", dir + "/t.txt"}, {"train", int64_t(40)}};
  Dataset a = make("text_bytes", args, 7, in), b = make("text_bytes", args, 7, in);
  Dataset other = make("text_bytes", args, 8, in);
  args["train"] = int64_t(90);
  Dataset moreTrain = make("text_bytes", args, 7, in);
  auto train = samples(a.train, in, 40);
  EXPECT_EQ(train[0].bytes, samples(b.train, in, 40)[0].bytes);
  EXPECT_EQ(train[1].bytes, samples(moreTrain.train, in, 40)[1].bytes);
  EXPECT_NE(train[0].bytes, samples(other.train, in, 40)[0].bytes);
  // The held-out windows are fixed: the same under any seed.
  EXPECT_EQ(samples(a.test, in, 10)[1].bytes, samples(other.test, in, 10)[1].bytes);
  EXPECT_EQ(samples(a.val, in, 10)[0].bytes, samples(moreTrain.val, in, 10)[0].bytes);
  auto late = samples(a.train, in, 1, 33);
  EXPECT_EQ(rowBytes(late[0], 0), rowBytes(train[0], 33));
}

TEST_F(DatasetsFiles, TextCorpusReadsFilesOnceInPathOrder) {
  writeText("c/b", "BB");
  writeText("c/a", "A");
  writeText("c/sub/z", "nested files are not read");
  std::filesystem::create_symlink(dir + "/c/a", dir + "/c/0-link-to-a");
  writeText("c/C", "c"); // 'C' < 'a' < 'b' in byte order
  TextCorpus corpus;
  std::string error;
  ASSERT_TRUE(readTextCorpus(dir + "/c", corpus, error)) << error;
  EXPECT_EQ(corpus.bytes, "cABB");
  EXPECT_EQ(corpus.files, (std::vector<std::string>{dir + "/c/C", dir + "/c/a", dir + "/c/b"}));
  // A glob, braces included, and one file.
  ASSERT_TRUE(readTextCorpus(dir + "/c/[ab]", corpus, error)) << error;
  EXPECT_EQ(corpus.bytes, "ABB");
  ASSERT_TRUE(readTextCorpus(dir + "/c/{b,C}", corpus, error)) << error;
  EXPECT_EQ(corpus.bytes, "cBB");
  ASSERT_TRUE(readTextCorpus(dir + "/c/b", corpus, error)) << error;
  EXPECT_EQ(corpus.bytes, "BB");
  // A link whose target is not listed is read.
  ASSERT_TRUE(readTextCorpus(dir + "/c/0*", corpus, error)) << error;
  EXPECT_EQ(corpus.bytes, "A");
}

TEST_F(DatasetsFiles, TextBytesErrors) {
  auto in = textInputs(4, 16);
  auto files = [&](const std::string &path) { return DataArgs{{"files", path}}; };
  EXPECT_EQ(makeError("text_bytes", files(dir + "/none"), in),
            "dataset 'text_bytes': no file or directory '" + dir + "/none'");
  EXPECT_EQ(makeError("text_bytes", files(dir + "/*.txt"), in),
            "dataset 'text_bytes': no file matches '" + dir + "/*.txt'");
  std::filesystem::create_directories(dir + "/empty/sub");
  EXPECT_EQ(makeError("text_bytes", files(dir + "/empty"), in),
            "dataset 'text_bytes': no file in '" + dir + "/empty'");
  writeText("zero/a", "");
  writeText("zero/b", "");
  EXPECT_EQ(makeError("text_bytes", files(dir + "/zero"), in),
            "dataset 'text_bytes': the 2 files of '" + dir + "/zero' are empty");
  writeText("short.txt", std::string(18, 'x')); // training part: 18 - 2 * 0 bytes
  EXPECT_THAT(makeError("text_bytes", files(dir + "/short.txt"), textInputs(4, 20)),
              HasSubstr("the training part of '" + dir + "/short.txt' (18 of its 18 bytes) is "
                        "shorter than one window of seq + 1 = 21 bytes"));
  if (::geteuid() != 0) { // root reads any file
    writeText("locked.txt", "secret");
    std::filesystem::permissions(dir + "/locked.txt", std::filesystem::perms::none);
    EXPECT_EQ(makeError("text_bytes", files(dir + "/locked.txt"), in),
              "dataset 'text_bytes': cannot read '" + dir + "/locked.txt'");
  }
  writeText("ok.txt", distinctText(1000));
  EXPECT_THAT(makeError("text_bytes", {{"files", dir + "/ok.txt"}, {"vocab", int64_t(256)}}, in),
              HasSubstr("has no argument 'vocab' (it takes seq, files, train, val, test)"));
  EXPECT_THAT(makeError("text_bytes", {{"files", int64_t(1)}}, in),
              HasSubstr("'files' of dataset 'text_bytes' must be a string"));
  std::vector<TensorSpec> floats = in;
  floats[1].dtype = DType::F32;
  EXPECT_THAT(makeError("text_bytes", files(dir + "/ok.txt"), floats),
              HasSubstr("gives its targets as i32[16] per sample, but the model's input 2 "
                        "'targets' is f32[4, 16]"));
  EXPECT_THAT(makeError("text_bytes", {{"files", dir + "/ok.txt"}, {"seq", int64_t(32)}}, in),
              HasSubstr("gives its tokens as i32[32] per sample"));
}

TEST(Datasets, TextBytesDefaultCorpusIsDebiansLicences) {
  if (!std::filesystem::is_directory(kDefaultTextCorpus))
    GTEST_SKIP() << kDefaultTextCorpus << " is missing (not a Debian system)";
  auto in = textInputs(4, 128);
  Dataset d = make("text_bytes", {}, 1, in);
  ASSERT_EQ(d.notices.size(), 1u);
  EXPECT_THAT(d.notices[0], HasSubstr(std::string("files from ") + kDefaultTextCorpus));
  TextCorpus corpus;
  std::string error;
  ASSERT_TRUE(readTextCorpus(kDefaultTextCorpus, corpus, error)) << error;
  EXPECT_GE(corpus.bytes.size(), 100000u);
  EXPECT_EQ(std::count(corpus.files.begin(), corpus.files.end(),
                       std::string(kDefaultTextCorpus) + "/GPL"),
            0); // a link to GPL-3
  EXPECT_GT(d.val.samples, 50);
  EXPECT_EQ(windowOf(samples(d.test, in, 1), 0, 128),
            corpus.bytes.substr(size_t(textSplits(int64_t(corpus.bytes.size())).testBegin), 129));
}

//===----------------------------------------------------------------------===//
// masked_tokens
//===----------------------------------------------------------------------===//

std::vector<TensorSpec> maskedInputs(int64_t batch = 4, int64_t seq = 32) {
  return {input("tokens", DType::I32, {batch, seq}), input("labels", DType::I32, {batch, seq})};
}

TEST(Datasets, MaskedLabelsAreExactlyAtTheMaskedTokens) {
  const int64_t n = 600, seq = 32;
  auto in = maskedInputs(4, seq);
  Dataset d = make("masked_tokens", {{"train", n}}, 3, in);
  EXPECT_EQ(d.val.samples, 1000);
  EXPECT_EQ(d.test.samples, 1000);
  auto b = samples(d.train, in, n);
  std::map<MaskedRule, int64_t> rules;
  for (int64_t r = 0; r < n; ++r) {
    MaskedSample s = maskedTokensSample(3, "train", r, 32, seq, 0.15, 31);
    ++rules[s.rule];
    int64_t masked = 0;
    for (int64_t j = 0; j < seq; ++j) {
      int32_t token = b[0].i32()[r * seq + j], label = b[1].i32()[r * seq + j];
      ASSERT_EQ(token, s.tokens[size_t(j)]);
      ASSERT_EQ(label, s.labels[size_t(j)]);
      ASSERT_GE(token, 0);
      ASSERT_LT(token, 32);
      ASSERT_LT(s.original[size_t(j)], 31); // never the mask id
      if (token == 31) {
        ++masked;
        ASSERT_EQ(label, s.original[size_t(j)]);
      } else {
        ASSERT_EQ(label, -100) << "sample " << r << " position " << j;
        ASSERT_EQ(token, s.original[size_t(j)]);
      }
    }
    ASSERT_EQ(masked, 5); // round(0.15 * 32)
    // The rule holds on the whole sequence.
    const std::vector<int32_t> &x = s.original;
    for (int64_t j = 1; j < seq; ++j) {
      int32_t step = (x[size_t(j)] - x[size_t(j - 1)] + 31) % 31;
      if (s.rule == MaskedRule::Count) {
        ASSERT_EQ(step, (x[1] - x[0] + 31) % 31);
      } else if (s.rule == MaskedRule::Copy && j >= 16) {
        ASSERT_EQ(x[size_t(j)], x[size_t(j - 16)]);
      } else if (s.rule == MaskedRule::Mirror) {
        ASSERT_EQ(x[size_t(j)], x[size_t(seq - 1 - j)]);
      }
    }
    if (s.rule == MaskedRule::Count) { // up or down by one
      ASSERT_TRUE((x[1] - x[0] + 31) % 31 == 1 || (x[1] - x[0] + 31) % 31 == 30);
    }
  }
  for (MaskedRule rule : {MaskedRule::Count, MaskedRule::Copy, MaskedRule::Mirror})
    EXPECT_NEAR(double(rules[rule]), n / 3.0, 60);
}

TEST(Datasets, MaskedTokensOracleReachesTheDocumentedAccuracy) {
  // An oracle that knows each sequence's rule: a counting token always, a
  // copied or mirrored one when its partner is unmasked, else 1 in 31.
  const int64_t seq = 32, n = 4000;
  double right = 0, total = 0;
  for (int64_t i = 0; i < n; ++i) {
    MaskedSample s = maskedTokensSample(11, "val", i, 32, seq, 0.15, 31);
    for (int64_t j = 0; j < seq; ++j) {
      if (s.labels[size_t(j)] == -100)
        continue;
      int64_t partner = s.rule == MaskedRule::Copy ? (j < 16 ? j + 16 : j - 16) : seq - 1 - j;
      bool known = s.rule == MaskedRule::Count || s.tokens[size_t(partner)] != 31;
      right += known ? 1.0 : 1.0 / 31;
      total += 1;
    }
  }
  double p = 4.0 / 31;
  EXPECT_NEAR(right / total, (1 + 2 * (1 - p + p / 31)) / 3, 0.01); // 0.917
}

TEST(Datasets, MaskedTokensMaskIdAndRate) {
  // mask_id 0: the symbols are written as 1 .. vocab-1.
  auto in = maskedInputs(4, 20);
  Dataset d = make("masked_tokens", {{"vocab", int64_t(10)}, {"mask_id", int64_t(0)},
                                     {"mask_rate", 0.5}, {"train", int64_t(50)}}, 1, in);
  auto b = samples(d.train, in, 50);
  for (int64_t r = 0; r < 50; ++r) {
    int64_t masked = 0;
    for (int64_t j = 0; j < 20; ++j) {
      int32_t token = b[0].i32()[r * 20 + j], label = b[1].i32()[r * 20 + j];
      ASSERT_TRUE(token >= 0 && token < 10);
      masked += token == 0;
      ASSERT_EQ(label == -100, token != 0);
      if (label != -100) {
        ASSERT_TRUE(label >= 1 && label < 10);
      }
    }
    ASSERT_EQ(masked, 10);
  }
  // Determinism and independent splits.
  auto again = samples(make("masked_tokens", {{"vocab", int64_t(10)}, {"mask_id", int64_t(0)},
                                              {"mask_rate", 0.5}, {"train", int64_t(80)}},
                            1, in)
                           .train,
                       in, 50);
  EXPECT_EQ(b[0].bytes, again[0].bytes);
  EXPECT_EQ(b[1].bytes, again[1].bytes);
  EXPECT_NE(rowBytes(samples(d.val, in, 1)[0], 0), rowBytes(b[0], 0));
  // A tiny rate still masks one token.
  std::vector<int32_t> labels = maskedTokensSample(1, "train", 0, 10, 20, 0.01, 9).labels;
  EXPECT_EQ(std::count(labels.begin(), labels.end(), -100), 19);
}

TEST(Datasets, MaskedTokensErrors) {
  auto in = maskedInputs();
  EXPECT_THAT(makeError("masked_tokens", {{"mask_id", int64_t(32)}}, in),
              HasSubstr("mask_id 32 is not a token of the vocab of 32 (0 .. 31)"));
  EXPECT_THAT(makeError("masked_tokens", {{"mask_rate", 0.0}}, in),
              HasSubstr("mask_rate must be in (0, 1], not 0"));
  EXPECT_THAT(makeError("masked_tokens", {{"mask_rate", 1.5}}, in), HasSubstr("not 1.5"));
  EXPECT_THAT(makeError("masked_tokens", {{"vocab", int64_t(2)}}, in),
              HasSubstr("needs a vocab of at least 3"));
  EXPECT_THAT(makeError("masked_tokens", {{"mask", int64_t(2)}}, in),
              HasSubstr("(it takes vocab, seq, mask_rate, mask_id, train, val, test)"));
  EXPECT_THAT(makeError("masked_tokens", {{"seq", int64_t(16)}}, in),
              HasSubstr("gives its tokens as i32[16] per sample, but the model's input 1 "
                        "'tokens' is i32[4, 32]"));
  EXPECT_THAT(makeError("masked_tokens", {}, maskedInputs(4, 1)),
              HasSubstr("needs sequences of at least 2 tokens"));
}

//===----------------------------------------------------------------------===//
// synthetic_images
//===----------------------------------------------------------------------===//

std::vector<TensorSpec> imageInputs(int64_t batch = 4, int64_t channels = 1, int64_t size = 16) {
  return {input("images", DType::F32, {batch, channels, size, size}),
          input("labels", DType::I32, {batch})};
}

TEST(Datasets, SyntheticImagesAreBalancedShapes) {
  auto in = imageInputs(4, 3, 16);
  Dataset d = make("synthetic_images", {{"train", int64_t(120)}}, 2, in);
  EXPECT_EQ(d.val.samples, 1000);
  auto b = samples(d.train, in, 120);
  std::vector<int64_t> counts(6, 0);
  for (int64_t r = 0; r < 120; ++r) {
    int32_t label = b[1].i32()[r];
    ASSERT_TRUE(label >= 0 && label < 6);
    ++counts[size_t(label)];
  }
  EXPECT_EQ(counts, std::vector<int64_t>(6, 20)); // 6 classes by default, balanced
  // The noise: the background has mean 0 and deviation 0.2.
  double sum = 0, squares = 0;
  int64_t background = 0;
  for (int64_t r = 0; r < 120; ++r) {
    int32_t label = 0;
    std::vector<float> clean = syntheticImage(2, "train", r, 6, 3, 16, 0.0, label);
    for (int64_t p = 0; p < 3 * 256; ++p)
      if (clean[size_t(p)] == 0) {
        double v = b[0].f32()[r * 3 * 256 + p];
        sum += v;
        squares += v * v;
        ++background;
      }
  }
  EXPECT_NEAR(sum / double(background), 0.0, 0.01);
  EXPECT_NEAR(std::sqrt(squares / double(background)), 0.2, 0.01);
}

TEST(Datasets, SyntheticImagesDrawTheirClassShape) {
  // Without noise, each class's pixels have its shape, in every channel.
  for (int64_t i = 0; i < 200; ++i) {
    int32_t label = 0;
    std::vector<float> image = syntheticImage(9, "test", i, 10, 2, 16, 0.0, label);
    ASSERT_EQ(label, i % 10);
    std::set<int64_t> rows, cols;
    std::map<int64_t, int64_t> diffs, sums; // pixels on each line y - x, y + x
    int64_t on = 0;
    for (int64_t p = 0; p < 256; ++p) {
      ASSERT_EQ(image[size_t(p)] > 0, image[size_t(256 + p)] > 0);
      if (image[size_t(p)] > 0) {
        ASSERT_TRUE(image[size_t(p)] >= 0.5f && image[size_t(p)] <= 1.0f);
        int64_t y = p / 16, x = p % 16;
        rows.insert(y), cols.insert(x), ++diffs[y - x], ++sums[y + x], ++on;
      }
    }
    int64_t height = *rows.rbegin() - *rows.begin() + 1, width = *cols.rbegin() - *cols.begin() + 1;
    ASSERT_GE(std::max(height, width), 6) << kImageShapes[label];
    ASSERT_LE(std::max(height, width), 12) << kImageShapes[label];
    switch (label) {
    case 0: // a horizontal bar: one row
      ASSERT_EQ(rows.size(), 1u);
      ASSERT_EQ(on, width);
      break;
    case 1:
      ASSERT_EQ(cols.size(), 1u);
      ASSERT_EQ(on, height);
      break;
    case 2: // a diagonal: one y - x
      ASSERT_EQ(diffs.size(), 1u);
      ASSERT_EQ(on, height);
      break;
    case 3:
      ASSERT_EQ(sums.size(), 1u);
      ASSERT_EQ(on, height);
      break;
    case 4: // a plus: a row and a column, L + L - 1 pixels
      ASSERT_EQ(height, width);
      ASSERT_EQ(on, 2 * height - 1);
      break;
    case 5: { // an x: two diagonals, crossing once where L is odd
      auto most = [](const std::map<int64_t, int64_t> &m) {
        int64_t n = 0;
        for (auto [line, pixels] : m)
          n = std::max(n, pixels);
        return n;
      };
      ASSERT_EQ(height, width);
      ASSERT_EQ(most(diffs), height);
      ASSERT_EQ(most(sums), height);
      ASSERT_EQ(on, 2 * height - height % 2);
      break;
    }
    case 6: // a square's outline
      ASSERT_EQ(height, width);
      ASSERT_EQ(on, 4 * (height - 1));
      break;
    case 7: // a ring: round, no pixel at the corners of the square around it
      ASSERT_EQ(height, width);
      ASSERT_EQ(image[size_t(*rows.begin() * 16 + *cols.begin())], 0.0f);
      ASSERT_EQ(image[size_t(*rows.rbegin() * 16 + *cols.rbegin())], 0.0f);
      ASSERT_GT(on, 2 * height);
      break;
    case 8: // a corner: the left and bottom edges
      ASSERT_EQ(on, height + width - 1);
      break;
    case 9:
      ASSERT_EQ(on, height * width);
      break;
    }
  }
}

TEST(Datasets, SyntheticImagesAreDeterministicAndSplitsIndependent) {
  auto in = imageInputs(4, 1, 16);
  DataArgs args = {{"classes", int64_t(4)}, {"train", int64_t(30)}};
  Dataset a = make("synthetic_images", args, 5, in), b = make("synthetic_images", args, 5, in);
  Dataset other = make("synthetic_images", args, 6, in);
  auto train = samples(a.train, in, 30);
  EXPECT_EQ(train[0].bytes, samples(b.train, in, 30)[0].bytes);
  EXPECT_NE(train[0].bytes, samples(other.train, in, 30)[0].bytes);
  EXPECT_EQ(train[1].bytes, samples(other.train, in, 30)[1].bytes); // labels: i % classes
  EXPECT_NE(rowBytes(samples(a.test, in, 1)[0], 0), rowBytes(train[0], 0));
  EXPECT_EQ(rowBytes(samples(a.train, in, 1, 21)[0], 0), rowBytes(train[0], 21));
}

TEST(Datasets, SyntheticImagesErrors) {
  EXPECT_THAT(makeError("synthetic_images", {{"classes", int64_t(11)}}, imageInputs()),
              HasSubstr("has 10 classes of shapes, not 11"));
  EXPECT_THAT(makeError("synthetic_images", {}, imageInputs(4, 1, 6)),
              HasSubstr("needs images of at least 8 x 8 pixels (size: 6)"));
  // Channels first: a model reading [B, H, W] is told the layout.
  std::vector<TensorSpec> hw = {input("images", DType::F32, {4, 16, 16}),
                                input("labels", DType::I32, {4})};
  EXPECT_THAT(makeError("synthetic_images", {}, hw),
              HasSubstr("gives its images as f32[1, 16, 16] per sample, but the model's input 1 "
                        "'images' is f32[4, 16, 16]"));
  EXPECT_THAT(makeError("synthetic_images", {{"size", int64_t(32)}}, imageInputs(4, 3, 16)),
              HasSubstr("images as f32[3, 32, 32] per sample"));
  EXPECT_THAT(makeError("synthetic_images", {{"shapes", int64_t(3)}}, imageInputs()),
              HasSubstr("(it takes classes, size, channels, noise, train, val, test)"));
  std::vector<TensorSpec> floatLabels = imageInputs();
  floatLabels[1].dtype = DType::F32;
  EXPECT_THAT(makeError("synthetic_images", {}, floatLabels),
              HasSubstr("gives its labels as i32[] per sample"));
}

} // namespace
