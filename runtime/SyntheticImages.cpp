//===- SyntheticImages.cpp - synthetic_images: shapes to classify ---------===//
//
// Issue 29's ViT-style example classifies synthetic images: which shape an
// image shows, at a random place and size, in noise. The class is the
// shape (kImageShapes, in order; `classes: k` takes the first k):
//
//   0 horizontal bar   1 vertical bar   2 diagonal (\)   3 antidiagonal (/)
//   4 plus             5 x              6 square (outline)
//   7 ring (outline)   8 corner (the left and bottom edges: an L)
//   9 filled square
//
// A shape fills a box of L x L pixels, L uniform in [max(3, ceil(size/3)),
// max(that, 3 size / 4)], at a uniform place inside the image; its strokes
// are t = max(1, size / 16) pixels wide. Telling the classes apart takes
// where the pixels are relative to one another (a plus is a horizontal and
// a vertical bar that cross; a square and a ring differ at the corners),
// not how many there are or where in the image. Each channel draws the
// shape at its own brightness, uniform in [0.5, 1], on 0; then every pixel
// gets N(0, noise^2) (noise 0.2 by default). Images are f32[channels, size,
// size], channels first as PyTorch's NCHW; labels i32[]. Image i of a split
// has class i % classes, so every split is balanced; its place, size,
// brightness and noise are Philox on "synthetic_images.SPLIT" at counter i.
//
//===----------------------------------------------------------------------===//

#include "runtime/DatasetSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace tfc::rt {
using namespace datasets;

namespace {

constexpr int64_t kImageClasses = int64_t(std::size(kImageShapes));

/// Whether pixel (i, j) of an L x L box, strokes t wide, is on shape `cls`.
bool onShape(int64_t cls, int64_t i, int64_t j, int64_t L, int64_t t) {
  int64_t m = (L - t) / 2; // the first row (column) of a centred bar
  bool hbar = i >= m && i < m + t, vbar = j >= m && j < m + t;
  bool diag = std::abs(i - j) < t, anti = std::abs(i + j - (L - 1)) < t;
  bool edge = i < t || i >= L - t || j < t || j >= L - t;
  switch (cls) {
  case 0:
    return hbar;
  case 1:
    return vbar;
  case 2:
    return diag;
  case 3:
    return anti;
  case 4:
    return hbar || vbar;
  case 5:
    return diag || anti;
  case 6:
    return edge;
  case 7: { // pixels whose centre lies within t/2 (+0.2) of the circle's mid-stroke
    double c = double(L - 1) / 2, r = c - double(t - 1) / 2;
    double d = std::hypot(double(i) - c, double(j) - c);
    return std::fabs(d - r) < double(t) / 2 + 0.2;
  }
  case 8:
    return j < t || i >= L - t;
  default:
    return true;
  }
}

} // namespace

std::vector<float> syntheticImage(uint64_t seed, const std::string &split, int64_t index,
                                  int64_t classes, int64_t channels, int64_t size, double noise,
                                  int32_t &label) {
  Draws d(seed, streamId("synthetic_images." + split), uint64_t(index));
  int64_t cls = index % classes;
  label = int32_t(cls);
  int64_t lo = std::max<int64_t>(3, (size + 2) / 3), hi = std::max(lo, 3 * size / 4);
  int64_t L = lo + int64_t(d.below(uint64_t(hi - lo + 1)));
  int64_t t = std::max<int64_t>(1, size / 16);
  int64_t top = int64_t(d.below(uint64_t(size - L + 1)));
  int64_t left = int64_t(d.below(uint64_t(size - L + 1)));
  std::vector<float> image(size_t(channels * size * size));
  for (int64_t c = 0; c < channels; ++c) {
    double brightness = d.uniform(0.5, 1.0);
    float *plane = image.data() + c * size * size;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j)
        if (onShape(cls, i, j, L, t))
          plane[(top + i) * size + left + j] = float(brightness);
  }
  for (float &v : image)
    v += float(noise * d.normal());
  return image;
}

namespace datasets {

bool makeSyntheticImages(const DataArgs &args, uint64_t seed,
                         const std::vector<TensorSpec> &inputs, Dataset &out,
                         std::string &error) {
  const std::string name = "synthetic_images";
  if (!checkArgs(name, args,
                 {{"classes", ArgKind::Positive},
                  {"size", ArgKind::Positive},
                  {"channels", ArgKind::Positive},
                  {"noise", ArgKind::Real},
                  {"train", ArgKind::Count},
                  {"val", ArgKind::Count},
                  {"test", ArgKind::Count}},
                 error))
    return false;
  // The model's image size and channels, where its first input is [B, C, H, W].
  bool nchw = !inputs.empty() && inputs[0].shape.size() == 4;
  int64_t classes = intArg(args, "classes", 6);
  int64_t channels = intArg(args, "channels", nchw ? inputs[0].shape[1] : 1);
  int64_t size = intArg(args, "size", nchw ? inputs[0].shape[2] : 16);
  double noise = realArg(args, "noise", 0.2);
  int64_t sizes[3];
  std::vector<ArraySpec> arrays = {{"images", DType::F32, {channels, size, size}},
                                   {"labels", DType::I32, {}}};
  if (!splitSizes(name, args, {10000, 1000, 1000}, sizes, error) ||
      !checkInputs(name, arrays, inputs, error))
    return false;
  if (classes > kImageClasses) {
    error = "dataset 'synthetic_images' has " + std::to_string(kImageClasses) +
            " classes of shapes, not " + std::to_string(classes);
    return false;
  }
  if (size < 8) {
    error = "dataset 'synthetic_images' needs images of at least 8 x 8 pixels (size: " +
            std::to_string(size) + ")";
    return false;
  }
  for (int k = 0; k < 3; ++k) {
    Split &split = *splitNamed(out, k);
    split.samples = sizes[k];
    std::string splitName = kSplitNames[k];
    split.fill = [=](int64_t index, std::vector<Tensor> &batch, int64_t row) {
      int32_t label = 0;
      std::vector<float> image =
          syntheticImage(seed, splitName, index, classes, channels, size, noise, label);
      std::memcpy(batch[0].f32() + row * int64_t(image.size()), image.data(),
                  image.size() * sizeof(float));
      batch[1].i32()[row] = label;
    };
  }
  return true;
}

} // namespace datasets
} // namespace tfc::rt
