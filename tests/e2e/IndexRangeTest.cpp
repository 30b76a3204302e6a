//===- IndexRangeTest.cpp - out-of-range ids and labels are refused -------===//
//
// A model that indexes with its inputs (an embedding's ids, one_hot's tags,
// cross_entropy's labels) gets each input's bound in its manifest; every
// command checks the values it feeds before a step runs and refuses an
// out-of-range one with exit 1, naming the input, the sample, the position,
// the value and the range, and writes nothing. Before this, an id of 2^31-1
// was a segmentation fault in predict, and a label of 10 of 10 classes
// trained on silently.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <filesystem>
#include <fstream>

using namespace tfc;
using namespace tfc::e2e;
using ::testing::HasSubstr;

namespace {

const std::string kTfc = TFC_BINARY;

// ids index 20 rows, tags 5 classes of one_hot, labels 10 classes.
const char *kModel = R"(model tiny {
  param vocab = 20
  input ids: i32[batch, 8]
  input tags: i32[batch, 8]
  input labels: i32[batch, 8]
  let x = embedding(ids, vocab, 16) + linear(one_hot(tags, 5), 16)
  let logits = linear(x, 10)
  loss cross_entropy(logits, labels)
  output logits
}

train tiny {
  data npy(dir: "DATA")
  batch 4
  epochs 1
  optimizer adam(lr: 1e-3)
}
)";

constexpr int64_t kBatch = 4, kSeq = 8;

/// i32[samples, 8] with valid values (i mod bound).
rt::Tensor validArray(int64_t samples, int32_t bound) {
  rt::Tensor t(rt::DType::I32, {samples, kSeq});
  for (int64_t i = 0; i < t.numel(); ++i)
    t.i32()[i] = int32_t(i % bound);
  return t;
}

class IndexRange : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir = makeTempDir("tfc-index-range");
    ASSERT_FALSE(dir.empty());
    std::string source = kModel;
    source.replace(source.find("DATA"), 4, dir + "/data");
    std::ofstream(dir + "/tiny.tf") << source;
    CommandResult compiled = run(kTfc + " compile " + dir + "/tiny.tf -o " + dir + "/tiny");
    ASSERT_EQ(compiled.status, 0) << compiled.output;
    binary = dir + "/tiny";
  }

  /// DIR/{train,val,test}/{ids,tags,labels}.npy of 12 valid samples each,
  /// with `bad` written at sample 5, position [3] of `input` in `split`.
  static std::string writeData(const std::string &name, const std::string &split,
                               const std::string &input, int32_t bad) {
    std::string data = dir + "/" + name;
    for (const char *s : {"train", "val", "test"}) {
      std::filesystem::create_directories(data + "/" + s);
      for (auto [in, bound] : {std::pair{"ids", 20}, {"tags", 5}, {"labels", 10}}) {
        rt::Tensor t = validArray(12, bound);
        if (split == s && input == in)
          t.i32()[5 * kSeq + 3] = bad;
        std::string error;
        EXPECT_TRUE(rt::writeNpy(data + "/" + s + "/" + in + ".npy", t, error)) << error;
      }
    }
    return data;
  }

  static std::string writeArray(const std::string &name, const rt::Tensor &t) {
    std::string path = dir + "/" + name, error;
    EXPECT_TRUE(rt::writeNpy(path, t, error)) << error;
    return path;
  }

  static std::string dir, binary;
};
std::string IndexRange::dir, IndexRange::binary;

const int32_t kBadIds[] = {20, -1, 1000, 100000, INT_MAX, INT_MIN};

TEST_F(IndexRange, PredictRefusesOutOfRangeIdsAndWritesNothing) {
  std::string tags = writeArray("tags.npy", validArray(6, 5));
  for (int32_t bad : kBadIds) {
    rt::Tensor ids = validArray(6, 20);
    ids.i32()[1 * kSeq + 3] = bad;
    std::string path = writeArray("ids.npy", ids), out = dir + "/out-" + std::to_string(bad);
    CommandResult r = run(binary + " predict --input ids=" + path + " --input tags=" + tags +
                          " --output-dir " + out);
    EXPECT_EQ(r.status, 1) << bad << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("input 'ids' ('" + path + "'): sample 1, position [3] is " +
                                    std::to_string(bad) + ", outside [0, 20)"));
    EXPECT_FALSE(std::filesystem::exists(out)) << bad;
  }
  // The largest valid id runs.
  rt::Tensor ids = validArray(6, 20);
  ids.i32()[3] = 19;
  CommandResult ok = run(binary + " predict --input ids=" + writeArray("ids.npy", ids) +
                         " --input tags=" + tags + " --output-dir " + dir + "/out-ok");
  EXPECT_EQ(ok.status, 0) << ok.output;
}

TEST_F(IndexRange, PredictRefusesAnOutOfRangeOneHotTag) {
  rt::Tensor tags = validArray(6, 5);
  tags.i32()[4 * kSeq + 7] = 5;
  CommandResult r = run(binary + " predict --input ids=" + writeArray("ids.npy", validArray(6, 20)) +
                        " --input tags=" + writeArray("tags-bad.npy", tags) + " --output-dir " +
                        dir + "/out-tags");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("input 'tags'"));
  EXPECT_THAT(r.output, HasSubstr("sample 4, position [7] is 5, outside [0, 5)"));
}

TEST_F(IndexRange, TrainRefusesOutOfRangeLabelsInAnySplitBeforeWritingAnything) {
  const int32_t badLabels[] = {10, -1, 1000000, INT_MAX, INT_MIN};
  int n = 0;
  for (const char *split : {"train", "val", "test"})
    for (int32_t bad : badLabels) {
      std::string name = "data-" + std::to_string(n++);
      std::string data = writeData(name, split, "labels", bad), runDir = dir + "/run-" + name;
      CommandResult r = run(binary + " train --data " + data + " --run-dir " + runDir);
      EXPECT_EQ(r.status, 1) << split << " " << bad << ": " << r.output;
      EXPECT_THAT(r.output, HasSubstr("input 'labels' (the " + std::string(split) +
                                      " split): sample 5, position [3] is " +
                                      std::to_string(bad) + ", outside [0, 10)"));
      EXPECT_FALSE(std::filesystem::exists(runDir)) << split << " " << bad;
    }
  // The same data with valid labels trains.
  std::string data = writeData("data-ok", "", "", 0);
  CommandResult ok = run(binary + " train --data " + data + " --run-dir " + dir + "/run-ok");
  EXPECT_EQ(ok.status, 0) << ok.output;
}

TEST_F(IndexRange, TrainRefusesOutOfRangeIds) {
  std::string data = writeData("data-ids", "train", "ids", INT_MAX);
  CommandResult r = run(binary + " train --data " + data + " --run-dir " + dir + "/run-ids");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("input 'ids' (the train split): sample 5, position [3] is " +
                                  std::to_string(INT_MAX)));
}

TEST_F(IndexRange, EvalRefusesOutOfRangeLabels) {
  std::string data = writeData("data-eval", "test", "labels", 10);
  ASSERT_EQ(run(binary + " init --out " + dir + "/p.safetensors").status, 0);
  CommandResult r = run(binary + " eval --checkpoint " + dir + "/p.safetensors --data " + data);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("input 'labels' (the test split): sample 5, position [3] is 10"));
}

TEST_F(IndexRange, RunRefusesOutOfRangeFeeds) {
  rt::Tensor labels = validArray(kBatch, 10);
  labels.i32()[2 * kSeq] = -7;
  std::string feeds = " --feed input:ids=" + writeArray("b-ids.npy", validArray(kBatch, 20)) +
                      " --feed input:tags=" + writeArray("b-tags.npy", validArray(kBatch, 5)) +
                      " --feed input:labels=" + writeArray("b-labels.npy", labels);
  CommandResult r = run(binary + " run evaluate" + feeds + " --output-dir " + dir + "/run-out");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("input 'labels'"));
  EXPECT_THAT(r.output, HasSubstr("sample 2, position [0] is -7, outside [0, 10)"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/run-out"));
}

TEST_F(IndexRange, BenchRefusesADatasetOutsideTheModel) {
  // The train block's data dir, with one label of 10 in the train split.
  std::filesystem::remove_all(dir + "/data");
  writeData("data", "train", "labels", 10);
  CommandResult r = run(binary + " bench --steps 1 --warmup 0 --entry train_step");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("input 'labels' (the train split)"));
  // Without --data, train reads the same directory and refuses it too.
  CommandResult t = run(binary + " train --run-dir " + dir + "/run-block");
  EXPECT_EQ(t.status, 1) << t.output;
  EXPECT_THAT(t.output, HasSubstr("input 'labels' (the train split)"));
}

TEST_F(IndexRange, TheManifestCarriesEachBound) {
  // The bound is in the embedded manifest (tfc compile --emit=manifest is not
  // a stage; the binary's bytes hold the JSON).
  std::string bytes = fileBytes(binary);
  EXPECT_THAT(bytes, HasSubstr(R"({"dtype":"i32","index_bound":20,"name":"ids")"));
  EXPECT_THAT(bytes, HasSubstr(R"({"dtype":"i32","index_bound":5,"name":"tags")"));
  EXPECT_THAT(bytes, HasSubstr(R"({"dtype":"i32","index_bound":10,"name":"labels")"));
}

} // namespace
