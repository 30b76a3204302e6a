//===- Datasets.cpp - the built-in datasets of `train` and batching -------===//
//
// Each dataset is one function below (the example models' datasets in files
// of their own: TextBytes.cpp, MaskedTokens.cpp, SyntheticImages.cpp), with a
// comment saying what it is and which seed document or issue it follows. All random draws come from Philox keyed by
// the seed, on a stream named after the dataset, the split and what is drawn
// ("reverse_sequences.test"), at counter = the sample's index: a sample never
// depends on another split, on the split's size, or on the order of calls.
//
//===----------------------------------------------------------------------===//

#include "runtime/Datasets.h"
#include "runtime/DatasetSupport.h"
#include "runtime/TrainBlock.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>

namespace tfc::rt {
using namespace datasets;
namespace {

/// A split backed by arrays of equal leading dimension: fill copies rows.
Split arraySplit(std::vector<Tensor> arrays) {
  Split s;
  s.samples = arrays.empty() ? 0 : arrays[0].shape[0];
  auto shared = std::make_shared<const std::vector<Tensor>>(std::move(arrays));
  s.fill = [shared](int64_t index, std::vector<Tensor> &batch, int64_t row) {
    for (size_t i = 0; i < shared->size(); ++i) {
      const Tensor &a = (*shared)[i];
      size_t rowBytes = a.bytes.size() / size_t(a.shape[0]);
      std::memcpy(batch[i].bytes.data() + size_t(row) * rowBytes,
                  a.bytes.data() + size_t(index) * rowBytes, rowBytes);
    }
  };
  return s;
}

bool isDirectory(const std::string &path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

//===----------------------------------------------------------------------===//
// reverse_sequences: the UvA Deep Learning tutorial 6 (seed 000, and its JAX
// version 004), ReverseDataset: `seq` tokens uniform in [0, classes), the
// labels the same tokens reversed. The tutorial: classes 10, seq 16, 50,000
// training, 1,000 validation and 10,000 test sequences.
//===----------------------------------------------------------------------===//

bool makeReverseSequences(const DataArgs &args, uint64_t seed,
                          const std::vector<TensorSpec> &inputs, Dataset &out,
                          std::string &error) {
  const std::string name = "reverse_sequences";
  if (!checkArgs(name, args,
                 {{"classes", ArgKind::Positive},
                  {"seq", ArgKind::Positive},
                  {"train", ArgKind::Count},
                  {"val", ArgKind::Count},
                  {"test", ArgKind::Count}},
                 error))
    return false;
  int64_t classes = intArg(args, "classes", 10);
  int64_t seq = intArg(args, "seq", sampleDim(inputs, 0, 0, 16));
  int64_t sizes[3];
  std::vector<ArraySpec> arrays = {{"tokens", DType::I32, {seq}}, {"labels", DType::I32, {seq}}};
  if (!splitSizes(name, args, {50000, 1000, 10000}, sizes, error) ||
      !checkInputs(name, arrays, inputs, error))
    return false;
  for (int k = 0; k < 3; ++k) {
    Split &split = *splitNamed(out, k);
    split.samples = sizes[k];
    uint32_t stream = streamId(name + "." + kSplitNames[k]);
    split.fill = [=](int64_t index, std::vector<Tensor> &batch, int64_t row) {
      Draws d(seed, stream, uint64_t(index));
      int32_t *tokens = batch[0].i32() + row * seq, *labels = batch[1].i32() + row * seq;
      for (int64_t j = 0; j < seq; ++j)
        tokens[j] = labels[seq - 1 - j] = int32_t(d.below(uint64_t(classes)));
    };
  }
  return true;
}

//===----------------------------------------------------------------------===//
// set_anomaly: the UvA tutorial 6 (seed 000, 004), set anomaly detection.
// Each image of a split is the anomaly of one set (so an epoch shows every
// image once as the anomaly); the set adds `set`-1 distinct images of one
// other class of the same split, drawn uniformly, and the anomaly goes to a
// uniformly drawn position (the tutorial always puts it last, which only a
// permutation-equivariant model may ignore). The label is its position.
// Sets are drawn per (split, sample index), so a training sample's set is
// fixed rather than redrawn each epoch as in the tutorial.
//
// The tutorial's images are CIFAR-100's, as 512 ResNet34 features. With
// `dir:`, DIR/{train,val,test}/features.npy (f32[N, 512]) and labels.npy
// (i32[N]) supply such features. Without it, the images are synthetic,
// with the same shapes and a structure like CIFAR-100's:
//   - 100 classes in superclasses of 5 (CIFAR-100 has 20 of 5), each class
//     with a prototype = 2 * (its superclass' vector) + (its own vector),
//     the vectors N(0, I) in `features` dimensions: classes of one
//     superclass are alike, so an anomaly from a sibling class is the hard
//     case (the tutorial's "train vs bus");
//   - an image is its class' prototype plus N(0, noise^2 I), all divided by
//     sqrt(5 + noise^2) so that features have unit variance;
//   - noise 8 by default, chosen by simulating three detectors on 400 sets:
//     the nearest prototype classifies a lone image right 93% of the time;
//     picking the image farthest from the mean of the others (no learning;
//     DatasetsTest checks it on the data) finds 70% of the anomalies; the
//     Bayes decision, which knows the prototypes, finds 400 of 400 (at
//     noise 10: 83%, 49%, 99.5%; at 6: 98%, 92%, 100%). A trained model
//     lands between the last two, where the tutorial's 94% lies;
//   - images are balanced over classes (image i has class i % classes), as
//     the tutorial's splits are: 45,000 training, 5,000 validation (10% of
//     each class of CIFAR's training set) and 10,000 test images.
//===----------------------------------------------------------------------===//

/// The images of one split: their classes, and how to write one.
struct AnomalyImages {
  std::vector<int32_t> classOf;
  std::vector<std::vector<int64_t>> byClass;
  std::vector<int32_t> eligible; // classes with at least set-1 images, ascending
  std::function<void(int64_t image, float *out)> write;
};

constexpr double kAnomalyNoise = 8.0;
constexpr int64_t kClassesPerSuperclass = 5;

/// Groups the images by class; false when fewer than two classes can fill a set.
bool groupImages(AnomalyImages &images, int64_t classes, int64_t set, const std::string &where,
                 std::string &error) {
  images.byClass.assign(size_t(classes), {});
  for (size_t i = 0; i < images.classOf.size(); ++i)
    images.byClass[size_t(images.classOf[i])].push_back(int64_t(i));
  for (int64_t c = 0; c < classes; ++c)
    if (int64_t(images.byClass[size_t(c)].size()) >= set - 1)
      images.eligible.push_back(int32_t(c));
  if (images.eligible.size() < 2 && !images.classOf.empty()) {
    error = "dataset 'set_anomaly': " + where + " has " + std::to_string(images.eligible.size()) +
            " classes with at least set-1 = " + std::to_string(set - 1) +
            " images; a set needs one such class other than its anomaly's, so two";
    return false;
  }
  return true;
}

Split anomalySplit(std::shared_ptr<const AnomalyImages> images, int64_t set, int64_t features,
                   uint64_t seed, uint32_t stream) {
  Split s;
  s.samples = int64_t(images->classOf.size());
  s.fill = [=](int64_t index, std::vector<Tensor> &batch, int64_t row) {
    Draws d(seed, stream, uint64_t(index));
    int32_t anomalyClass = images->classOf[size_t(index)];
    const std::vector<int32_t> &eligible = images->eligible;
    auto at = std::lower_bound(eligible.begin(), eligible.end(), anomalyClass);
    bool skip = at != eligible.end() && *at == anomalyClass;
    uint64_t k = d.below(eligible.size() - skip);
    if (skip && k >= uint64_t(at - eligible.begin()))
      ++k;
    const std::vector<int64_t> &pool = images->byClass[size_t(eligible[k])];
    std::vector<int64_t> chosen;
    while (int64_t(chosen.size()) < set - 1) {
      int64_t image = pool[d.below(pool.size())];
      if (std::find(chosen.begin(), chosen.end(), image) == chosen.end())
        chosen.push_back(image);
    }
    int64_t position = int64_t(d.below(uint64_t(set)));
    float *rows = batch[0].f32() + row * set * features;
    for (int64_t p = 0; p < set; ++p)
      images->write(p == position ? index : chosen[size_t(p < position ? p : p - 1)],
                    rows + p * features);
    batch[1].i32()[row] = int32_t(position);
  };
  return s;
}

/// The images of one split directory of real features; false on a problem.
bool readAnomalyImages(const std::string &dir, int64_t features, int64_t &classes,
                       AnomalyImages &images, std::string &error) {
  auto feats = std::make_shared<Tensor>();
  Tensor labels;
  if (!readNpy(dir + "/features.npy", *feats, error) ||
      !readNpy(dir + "/labels.npy", labels, error))
    return false;
  if (feats->dtype != DType::F32 || feats->shape.size() != 2 || feats->shape[1] != features) {
    error = "'" + dir + "/features.npy' is " + arrayText(feats->dtype, feats->shape) +
            "; set_anomaly needs f32[images, " + std::to_string(features) + "]";
    return false;
  }
  if (labels.dtype != DType::I32 || labels.shape != std::vector<int64_t>{feats->shape[0]}) {
    error = "'" + dir + "/labels.npy' is " + arrayText(labels.dtype, labels.shape) +
            "; set_anomaly needs i32[" + std::to_string(feats->shape[0]) +
            "], one class per image of features.npy";
    return false;
  }
  images.classOf.assign(labels.i32(), labels.i32() + labels.numel());
  for (int32_t c : images.classOf) {
    if (c < 0 || (classes > 0 && c >= classes)) {
      error = "'" + dir + "/labels.npy' holds class " + std::to_string(c) + ", outside [0, " +
              (classes > 0 ? std::to_string(classes) : "...") + ")";
      return false;
    }
  }
  int64_t rowFloats = features;
  images.write = [feats, rowFloats](int64_t image, float *out) {
    std::memcpy(out, feats->f32() + image * rowFloats, size_t(rowFloats) * sizeof(float));
  };
  return true;
}

bool makeSetAnomaly(const DataArgs &args, uint64_t seed, const std::vector<TensorSpec> &inputs,
                    unsigned needed, Dataset &out, std::string &error) {
  const std::string name = "set_anomaly";
  if (!checkArgs(name, args,
                 {{"classes", ArgKind::Positive},
                  {"features", ArgKind::Positive},
                  {"set", ArgKind::Positive},
                  {"train", ArgKind::Count},
                  {"val", ArgKind::Count},
                  {"test", ArgKind::Count},
                  {"noise", ArgKind::Real},
                  {"dir", ArgKind::Text}},
                 error))
    return false;
  int64_t set = intArg(args, "set", sampleDim(inputs, 0, 0, 10));
  int64_t features = intArg(args, "features", sampleDim(inputs, 0, 1, 512));
  std::vector<ArraySpec> arrays = {{"sets", DType::F32, {set, features}},
                                   {"labels", DType::I32, {}}};
  if (!checkInputs(name, arrays, inputs, error))
    return false;
  if (set < 2) {
    error = "dataset 'set_anomaly' needs sets of at least 2 (set: " + std::to_string(set) + ")";
    return false;
  }

  std::string dir = textArg(args, "dir");
  if (!dir.empty()) {
    if (args.count("noise")) {
      error = "dataset 'set_anomaly': noise: is for synthetic features, not with dir:";
      return false;
    }
    int64_t classes = args.count("classes") ? intArg(args, "classes", 0) : 0;
    std::vector<AnomalyImages> splits(3);
    for (int k = 0; k < 3; ++k) {
      if (!(needed & (1u << k)))
        continue;
      std::string sub = dir + "/" + kSplitNames[k];
      if (!isDirectory(sub)) {
        if (k == 0) {
          error = "dataset 'set_anomaly': no training split: '" + sub + "' is not a directory";
          return false;
        }
        out.notices.push_back(std::string("no ") + kSplitNames[k] + " split in " + dir +
                              ": skipped");
        continue;
      }
      if (!readAnomalyImages(sub, features, classes, splits[size_t(k)], error))
        return false;
      int64_t images = int64_t(splits[size_t(k)].classOf.size());
      if (args.count(kSplitNames[k]) && intArg(args, kSplitNames[k], 0) != images) {
        error = "dataset 'set_anomaly': " + std::string(kSplitNames[k]) + ": " +
                std::to_string(intArg(args, kSplitNames[k], 0)) + " but '" + sub +
                "' holds " + std::to_string(images) + " images (one set per image)";
        return false;
      }
    }
    if (classes == 0) // from the labels: the largest plus one
      for (const AnomalyImages &s : splits)
        for (int32_t c : s.classOf)
          classes = std::max<int64_t>(classes, c + 1);
    for (int k = 0; k < 3; ++k) {
      AnomalyImages &images = splits[size_t(k)];
      if (images.classOf.empty() && (k > 0 || !(needed & kTrainSplit)))
        continue;
      if (images.classOf.empty()) {
        error = "dataset 'set_anomaly': '" + dir + "/train' holds no images";
        return false;
      }
      if (!groupImages(images, classes, set, "'" + dir + "/" + kSplitNames[k] + "'", error))
        return false;
      *splitNamed(out, k) =
          anomalySplit(std::make_shared<const AnomalyImages>(std::move(images)), set, features,
                       seed, streamId(name + ".sets." + kSplitNames[k]));
    }
    return true;
  }

  int64_t classes = intArg(args, "classes", 100);
  double noise = realArg(args, "noise", kAnomalyNoise);
  int64_t sizes[3];
  if (!splitSizes(name, args, {45000, 5000, 10000}, sizes, error))
    return false;
  if (classes < 2) {
    error = "dataset 'set_anomaly' needs at least 2 classes (classes: " + std::to_string(classes) +
            ")";
    return false;
  }
  // The prototypes: shared by the splits, as CIFAR's classes are.
  auto prototypes = std::make_shared<std::vector<double>>(size_t(classes * features));
  for (int64_t c = 0; c < classes; ++c) {
    Draws super(seed, streamId(name + ".superclasses"), uint64_t(c / kClassesPerSuperclass));
    Draws own(seed, streamId(name + ".classes"), uint64_t(c));
    for (int64_t j = 0; j < features; ++j)
      (*prototypes)[size_t(c * features + j)] = 2.0 * super.normal() + own.normal();
  }
  double scale = 1.0 / std::sqrt(5.0 + noise * noise);
  for (int k = 0; k < 3; ++k) {
    if (sizes[k] == 0)
      continue;
    AnomalyImages images;
    images.classOf.resize(size_t(sizes[k]));
    for (int64_t i = 0; i < sizes[k]; ++i)
      images.classOf[size_t(i)] = int32_t(i % classes);
    uint32_t stream = streamId(name + ".images." + kSplitNames[k]);
    images.write = [=](int64_t image, float *out) {
      Draws d(seed, stream, uint64_t(image));
      const double *proto = prototypes->data() + (image % classes) * features;
      for (int64_t j = 0; j < features; ++j)
        out[j] = float(scale * (proto[j] + noise * d.normal()));
    };
    if (!groupImages(images, classes, set,
                     "split '" + std::string(kSplitNames[k]) + "' (" + std::to_string(sizes[k]) +
                         " images over " + std::to_string(classes) + " classes)",
                     error))
      return false;
    *splitNamed(out, k) =
        anomalySplit(std::make_shared<const AnomalyImages>(std::move(images)), set, features,
                     seed, streamId(name + ".sets." + kSplitNames[k]));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// fleuret_sequences: François Fleuret's toy sequences, as the blog post
// "Finding a proper case study for attention" (seed 002) generates them
// with his code: two triangles and two boxes on a sequence of `length` (the
// model's, 100 in the post), positions uniform in [5.5, length - 5.5]
// (seq_width_max / 2 from either end), heights uniform in [1, 25], widths
// uniform in [5, 11]. A draw is kept when the two triangles' heights differ
// by more than 4 (the code tests the triangles twice and never the boxes; we
// keep that) and no two shapes touch (their supports, widened by one step,
// never overlap); otherwise it is drawn again. The input is the profile of
// the shapes, the target the profile with each shape's height replaced by
// the mean height of its kind; both get uniform noise in [-0.15, 0.15)
// (noise_level 0.3, `noise:`). The post normalises inputs and targets by one
// mean and standard deviation of all training inputs and targets together;
// so do we, over the training split (the unbiased std, as torch's), so
// their values depend on `train:` while the raw samples of a split never do.
// The post's 25,000 sequences less its 20% random validation split, and its
// 1,000 test sequences, are the defaults.
//===----------------------------------------------------------------------===//

constexpr double kFleuretHeightMin = 1, kFleuretHeightMax = 25;
constexpr double kFleuretWidthMin = 5, kFleuretWidthMax = 11;

double triangleAt(const FleuretShape &s, double t) {
  return std::max(0.0, s.height - std::max(0.0, std::fabs(t - s.position) - 0.5) * 2 *
                                      s.height / s.width);
}
double boxAt(const FleuretShape &s, double t) {
  return s.height - std::fabs((t - s.position) * 2 * s.height / s.width) > 0 ? s.height : 0.0;
}

/// Whether two of the shapes touch: the blog's `collisions`, a max-pool of
/// width 2 over each shape's support, then more than one shape at a step.
bool fleuretCollides(const FleuretShape (&triangles)[2], const FleuretShape (&boxes)[2],
                     int64_t length) {
  auto on = [&](int s, int64_t t) {
    return s < 2 ? triangleAt(triangles[s], double(t)) > 0 : boxAt(boxes[s - 2], double(t)) > 0;
  };
  for (int64_t t = 0; t + 1 < length; ++t) {
    int count = 0;
    for (int s = 0; s < 4; ++s)
      count += on(s, t) || on(s, t + 1);
    if (count > 1)
      return true;
  }
  return false;
}

FleuretSample fleuretDraw(Draws &d, int64_t length, double noise) {
  FleuretSample s;
  auto draw = [&](FleuretShape &shape) {
    shape.position = d.uniform(kFleuretWidthMax / 2, double(length) - kFleuretWidthMax / 2);
    shape.height = d.uniform(kFleuretHeightMin, kFleuretHeightMax);
    shape.width = d.uniform(kFleuretWidthMin, kFleuretWidthMax);
  };
  do {
    for (FleuretShape &shape : s.triangles)
      draw(shape);
    for (FleuretShape &shape : s.boxes)
      draw(shape);
  } while (!(std::fabs(s.triangles[0].height - s.triangles[1].height) > 4) ||
           fleuretCollides(s.triangles, s.boxes, length));

  FleuretShape meanTriangles[2] = {s.triangles[0], s.triangles[1]};
  FleuretShape meanBoxes[2] = {s.boxes[0], s.boxes[1]};
  double triangleHeight = (s.triangles[0].height + s.triangles[1].height) / 2;
  double boxHeight = (s.boxes[0].height + s.boxes[1].height) / 2;
  for (int k = 0; k < 2; ++k) {
    meanTriangles[k].height = triangleHeight;
    meanBoxes[k].height = boxHeight;
  }
  s.input = fleuretProfile(s.triangles, s.boxes, length);
  s.target = fleuretProfile(meanTriangles, meanBoxes, length);
  for (double &v : s.input)
    v += noise * d.uniform() - noise / 2;
  for (double &v : s.target)
    v += noise * d.uniform() - noise / 2;
  return s;
}

bool makeFleuretSequences(const DataArgs &args, uint64_t seed,
                          const std::vector<TensorSpec> &inputs, Dataset &out,
                          std::string &error) {
  const std::string name = "fleuret_sequences";
  if (!checkArgs(name, args,
                 {{"train", ArgKind::Count},
                  {"val", ArgKind::Count},
                  {"test", ArgKind::Count},
                  {"noise", ArgKind::Real}},
                 error))
    return false;
  int64_t length = sampleDim(inputs, 0, 1, 100);
  double noise = realArg(args, "noise", 0.3);
  int64_t sizes[3];
  std::vector<ArraySpec> arrays = {{"input", DType::F32, {1, length}},
                                   {"target", DType::F32, {1, length}}};
  if (!splitSizes(name, args, {20000, 5000, 1000}, sizes, error) ||
      !checkInputs(name, arrays, inputs, error))
    return false;
  if (length < int64_t(kFleuretWidthMax) + 1) {
    error = "dataset 'fleuret_sequences' needs sequences longer than " +
            std::to_string(int64_t(kFleuretWidthMax)) + " (the model's are " +
            std::to_string(length) + ")";
    return false;
  }
  // One mean and std over every value of the training inputs and targets.
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < sizes[0]; ++i) {
    FleuretSample s = fleuretSample(seed, "train", i, length, noise);
    for (const std::vector<double> *v : {&s.input, &s.target})
      for (double x : *v) {
        sum += x;
        squares += x * x;
      }
  }
  double n = double(sizes[0] * 2 * length);
  double mean = sum / n;
  double var = n > 1 ? std::max(0.0, (squares - sum * mean) / (n - 1)) : 0.0;
  double std = var > 0 ? std::sqrt(var) : 1.0;
  for (int k = 0; k < 3; ++k) {
    Split &split = *splitNamed(out, k);
    split.samples = sizes[k];
    std::string splitName = kSplitNames[k];
    split.fill = [=](int64_t index, std::vector<Tensor> &batch, int64_t row) {
      FleuretSample s = fleuretSample(seed, splitName, index, length, noise);
      float *in = batch[0].f32() + row * length, *target = batch[1].f32() + row * length;
      for (int64_t t = 0; t < length; ++t) {
        in[t] = float((s.input[size_t(t)] - mean) / std);
        target[t] = float((s.target[size_t(t)] - mean) / std);
      }
    };
  }
  return true;
}

//===----------------------------------------------------------------------===//
// square_corners: "Deep Learning with PyTorch Step-by-Step" (seed 001, the
// chapter's data_generation/square_sequences.py): the corners (-1, -1),
// (-1, 1), (1, 1), (1, -1) of a square of side 2 centred at the origin, in
// order from a uniformly drawn corner, clockwise or counter-clockwise with
// equal chance, each coordinate plus N(0, 0.1^2) noise (`noise:`). The
// source is the first two corners, the target the last two, as (x, y)
// points. The book draws 256 training squares (its seed 13) and 128
// validation ones (seed 19); here each split has its own stream of the seed.
//===----------------------------------------------------------------------===//

bool makeSquareCorners(const DataArgs &args, uint64_t seed, const std::vector<TensorSpec> &inputs,
                       Dataset &out, std::string &error) {
  const std::string name = "square_corners";
  if (!checkArgs(name, args,
                 {{"train", ArgKind::Count},
                  {"val", ArgKind::Count},
                  {"test", ArgKind::Count},
                  {"noise", ArgKind::Real}},
                 error))
    return false;
  double noise = realArg(args, "noise", 0.1);
  int64_t sizes[3];
  std::vector<ArraySpec> arrays = {{"source", DType::F32, {2, 2}}, {"target", DType::F32, {2, 2}}};
  if (!splitSizes(name, args, {256, 128, 0}, sizes, error) ||
      !checkInputs(name, arrays, inputs, error))
    return false;
  for (int k = 0; k < 3; ++k) {
    Split &split = *splitNamed(out, k);
    split.samples = sizes[k];
    uint32_t stream = streamId(name + "." + kSplitNames[k]);
    split.fill = [=](int64_t index, std::vector<Tensor> &batch, int64_t row) {
      static const double corners[4][2] = {{-1, -1}, {-1, 1}, {1, 1}, {1, -1}};
      Draws d(seed, stream, uint64_t(index));
      uint64_t base = d.below(4), clockwise = d.below(2);
      for (uint64_t i = 0; i < 4; ++i) {
        const double *corner = corners[clockwise ? (base + i) % 4 : (base + 4 - i) % 4];
        float *point = batch[i / 2].f32() + row * 4 + (i % 2) * 2;
        point[0] = float(corner[0] + noise * d.normal());
        point[1] = float(corner[1] + noise * d.normal());
      }
    };
  }
  return true;
}

//===----------------------------------------------------------------------===//
// npy: arrays on disk, DIR/{train,val,test}/INPUT.npy for each model input,
// samples along axis 0. A missing val or test directory is skipped, and a split
// the caller does not need is not read (`eval` needs no train/).
//===----------------------------------------------------------------------===//

bool makeNpy(const DataArgs &args, const std::vector<TensorSpec> &inputs, unsigned needed,
             Dataset &out, std::string &error) {
  const std::string name = "npy";
  if (!checkArgs(name, args, {{"dir", ArgKind::Text}}, error))
    return false;
  std::string dir = textArg(args, "dir");
  if (dir.empty()) {
    error = "dataset 'npy' needs dir: \"DIR\" (DIR/train/INPUT.npy, ...)";
    return false;
  }
  for (int k = 0; k < 3; ++k) {
    if (!(needed & (1u << k)))
      continue;
    std::string sub = dir + "/" + kSplitNames[k];
    if (!isDirectory(sub)) {
      if (k == 0) {
        error = "dataset 'npy': no training split: '" + sub + "' is not a directory";
        return false;
      }
      out.notices.push_back(std::string("no ") + kSplitNames[k] + " split in " + dir +
                            ": skipped");
      continue;
    }
    std::vector<Tensor> arrays;
    for (const TensorSpec &in : inputs) {
      std::string path = sub + "/" + in.name + ".npy";
      Tensor t;
      if (!readNpy(path, t, error))
        return false;
      if (in.shape.empty() || t.shape.empty() || t.dtype != in.dtype ||
          !std::equal(t.shape.begin() + 1, t.shape.end(), in.shape.begin() + 1,
                      in.shape.end())) {
        std::vector<int64_t> per(in.shape.begin() + (in.shape.empty() ? 0 : 1), in.shape.end());
        error = "'" + path + "' is " + arrayText(t.dtype, t.shape) + " but the model's input '" +
                in.name + "' is " + arrayText(in.dtype, in.shape) + ": it needs " +
                arrayText(in.dtype, per) + " per sample, samples along axis 0";
        return false;
      }
      if (!arrays.empty() && t.shape[0] != arrays[0].shape[0]) {
        error = "'" + path + "' has " + std::to_string(t.shape[0]) + " samples but '" + sub +
                "/" + inputs[0].name + ".npy' has " + std::to_string(arrays[0].shape[0]);
        return false;
      }
      arrays.push_back(std::move(t));
    }
    *splitNamed(out, k) = arraySplit(std::move(arrays));
  }
  return true;
}

} // namespace

FleuretSample fleuretSample(uint64_t seed, const std::string &split, int64_t index,
                            int64_t length, double noise) {
  Draws d(seed, streamId("fleuret_sequences." + split), uint64_t(index));
  return fleuretDraw(d, length, noise);
}

std::vector<double> fleuretProfile(const FleuretShape (&triangles)[2],
                                   const FleuretShape (&boxes)[2], int64_t length) {
  std::vector<double> y(size_t(std::max<int64_t>(length, 0)), 0.0);
  for (int64_t t = 0; t < length; ++t)
    for (int k = 0; k < 2; ++k)
      y[size_t(t)] = std::max({y[size_t(t)], triangleAt(triangles[k], double(t)),
                               boxAt(boxes[k], double(t))});
  return y;
}

bool makeDataset(const std::string &name, const DataArgs &args, uint64_t seed,
                 const std::vector<TensorSpec> &inputs, Dataset &out, std::string &error,
                 unsigned splits) {
  out = Dataset();
  bool ok = false;
  if (name == "reverse_sequences")
    ok = makeReverseSequences(args, seed, inputs, out, error);
  else if (name == "set_anomaly")
    ok = makeSetAnomaly(args, seed, inputs, splits, out, error);
  else if (name == "fleuret_sequences")
    ok = makeFleuretSequences(args, seed, inputs, out, error);
  else if (name == "square_corners")
    ok = makeSquareCorners(args, seed, inputs, out, error);
  else if (name == "text_bytes")
    ok = makeTextBytes(args, seed, inputs, out, error);
  else if (name == "masked_tokens")
    ok = makeMaskedTokens(args, seed, inputs, out, error);
  else if (name == "synthetic_images")
    ok = makeSyntheticImages(args, seed, inputs, out, error);
  else if (name == "npy")
    ok = makeNpy(args, inputs, splits, out, error);
  else
    error = "unknown dataset '" + name + "' (known: " + train::listNames(train::kDatasets) + ")";
  if (!ok)
    out = Dataset();
  return ok;
}

std::vector<int64_t> epochOrder(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(size_t(std::max<int64_t>(n, 0)));
  std::iota(order.begin(), order.end(), 0);
  Draws d(seed, streamId("epoch_order"), uint64_t(epoch));
  for (int64_t i = n - 1; i > 0; --i) // Fisher-Yates
    std::swap(order[size_t(i)], order[size_t(d.below(uint64_t(i) + 1))]);
  return order;
}

int64_t fillBatch(const Split &split, const std::vector<TensorSpec> &inputs,
                  const std::vector<int64_t> *order, int64_t begin, int64_t count,
                  std::vector<Tensor> &batch) {
  bool fits = batch.size() == inputs.size();
  for (size_t i = 0; fits && i < inputs.size(); ++i)
    fits = batch[i].dtype == inputs[i].dtype && batch[i].shape == inputs[i].shape;
  if (!fits) {
    batch.clear();
    for (const TensorSpec &in : inputs)
      batch.emplace_back(in.dtype, in.shape);
  }
  for (Tensor &t : batch)
    std::memset(t.bytes.data(), 0, t.bytes.size());
  int64_t rows = inputs.empty() || inputs[0].shape.empty() ? 0 : inputs[0].shape[0];
  int64_t available = (order ? int64_t(order->size()) : split.samples) - begin;
  rows = std::max<int64_t>(0, std::min({count, rows, available}));
  if (!split.fill)
    return 0;
  // Samples are pure functions of their index: fill rows in parallel.
  parallelFor(rows, 8, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      split.fill(order ? (*order)[size_t(begin + r)] : begin + r, batch, r);
  });
  return rows;
}

} // namespace tfc::rt
