//===- InputChecks.cpp - input values checked before a step uses them -----===//

#include "runtime/InputChecks.h"

#include <algorithm>

namespace tfc::rt {

namespace {

/// "[2, 5]": the position of element `offset` of a sample of shape `shape`.
std::string positionString(int64_t offset, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = offset % shape[d];
    offset /= shape[d];
  }
  return shapeString(index);
}

} // namespace

bool checkInputValues(const TensorSpec &spec, const Tensor &t, const std::string &source,
                      int64_t firstSample, std::string &error) {
  if (spec.indexBound <= 0 || t.dtype != DType::I32)
    return true;
  const int32_t *values = t.i32();
  const int64_t count = t.numel();
  // One unsigned compare also catches negatives; the loop vectorises, and
  // only a bad tensor is searched for its first offender.
  const auto bound = uint32_t(std::min<int64_t>(spec.indexBound, INT32_MAX));
  bool bad = false;
  for (int64_t i = 0; i < count; ++i)
    bad |= uint32_t(values[i]) >= bound;
  if (!bad)
    return true;
  int64_t at = 0;
  while (uint32_t(values[at]) < bound)
    ++at;
  std::string where;
  if (t.shape.empty()) {
    where = "its value";
  } else {
    std::vector<int64_t> sampleShape(t.shape.begin() + 1, t.shape.end());
    int64_t perSample = 1;
    for (int64_t d : sampleShape)
      perSample *= d;
    where = "sample " + std::to_string(firstSample + at / perSample);
    if (!sampleShape.empty())
      where += ", position " + positionString(at % perSample, sampleShape);
  }
  error = "input '" + spec.name + "' (" + source + "): " + where + " is " +
          std::to_string(values[at]) + ", outside [0, " + std::to_string(spec.indexBound) +
          "): the model indexes " + std::to_string(spec.indexBound) +
          " rows or classes with it";
  return false;
}

bool checkSplitValues(const Split &split, const std::vector<TensorSpec> &inputs,
                      const std::string &splitName, std::string &error) {
  if (std::none_of(inputs.begin(), inputs.end(),
                   [](const TensorSpec &s) { return s.indexBound > 0; }))
    return true;
  // A batch at a time, filled as training fills it; the rows after the
  // split's end are zeros, which every bound admits.
  const int64_t batchSize = inputs.front().shape.empty() ? 1 : inputs.front().shape[0];
  std::vector<Tensor> batch;
  for (int64_t begin = 0; begin < split.samples; begin += batchSize) {
    fillBatch(split, inputs, nullptr, begin, batchSize, batch);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!checkInputValues(inputs[i], batch[i], "the " + splitName + " split", begin, error))
        return false;
  }
  return true;
}

bool checkDatasetValues(const Dataset &data, const std::vector<TensorSpec> &inputs,
                        std::string &error) {
  return checkSplitValues(data.train, inputs, "train", error) &&
         checkSplitValues(data.val, inputs, "val", error) &&
         checkSplitValues(data.test, inputs, "test", error);
}

} // namespace tfc::rt
