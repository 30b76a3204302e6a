//===- TextBytes.cpp - text_bytes: byte-level language modelling ----------===//
//
// Issue 29's GPT-style example learns the bytes of text that a fresh
// machine has: by default the licence texts of base-files, which every
// Debian system installs (/usr/share/common-licenses), so nothing is
// downloaded. `files:` names other text: a file, a directory or a glob.
//
// The files, in the byte order of their paths, are concatenated into one
// corpus; its last 5% is the test split, the 5% before it the validation
// split, the rest the training split (by byte offset: a window never crosses
// a boundary). A sample is a window of seq+1 bytes: its first seq bytes are
// the tokens, its last seq the targets (tokens shifted by one), each an i32
// in [0, 256). Training windows start at offsets drawn uniformly from the
// training part (Philox on "text_bytes.train", counter = the sample index),
// so `train:` may be any number (by default the training bytes / seq: an
// epoch reads about as many bytes as the part holds). Validation and test
// windows lie at stride seq from their part's start: each byte of the part
// after its first is a target once, up to the last whole window, so a mean
// cross entropy over the split is the model's nats per byte (bits per byte:
// divided by ln 2). `val:` and `test:` may take fewer windows than fit.
//
//===----------------------------------------------------------------------===//

#include "runtime/DatasetSupport.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include <glob.h>

namespace tfc::rt {
namespace fs = std::filesystem;
using namespace datasets;

namespace {

bool hasGlobMeta(const std::string &s) { return s.find_first_of("*?[{") != std::string::npos; }

/// The paths `source` names, unsorted: itself, a directory's entries, or a
/// glob's matches. False (with `error`) when there is nothing at all.
bool listSource(const std::string &source, std::vector<std::string> &paths, std::string &error) {
  std::error_code ec;
  const std::string where = "dataset 'text_bytes': ";
  if (fs::is_directory(source, ec)) {
    for (fs::directory_iterator it(source, ec), end; !ec && it != end; it.increment(ec))
      paths.push_back(it->path().string());
    if (ec) {
      error = where + "cannot list '" + source + "': " + ec.message();
      return false;
    }
    return true;
  }
  if (fs::exists(source, ec)) {
    paths.push_back(source);
    return true;
  }
  if (!hasGlobMeta(source)) {
    error = where + "no file or directory '" + source + "'";
    return false;
  }
  int flags = 0;
#ifdef GLOB_BRACE
  flags |= GLOB_BRACE;
#endif
  glob_t g{};
  int rc = ::glob(source.c_str(), flags, nullptr, &g);
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i)
    paths.push_back(g.gl_pathv[i]);
  globfree(&g);
  if (paths.empty()) {
    error = where + "no file matches '" + source + "'";
    return false;
  }
  return true;
}

} // namespace

bool readTextCorpus(const std::string &source, TextCorpus &out, std::string &error) {
  out = TextCorpus();
  std::vector<std::string> listed;
  if (!listSource(source, listed, error))
    return false;
  // Regular files (through links), each real file once: a link is dropped
  // where its target is listed itself, then the first path of each file kept.
  struct Entry {
    std::string path, real;
    bool link;
  };
  std::vector<Entry> entries;
  std::set<std::string> plainFiles;
  for (const std::string &path : listed) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      continue;
    Entry e{path, fs::weakly_canonical(path, ec).string(), fs::is_symlink(path, ec)};
    if (ec)
      e.real = path;
    if (!e.link)
      plainFiles.insert(e.real);
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.path < b.path; });
  std::set<std::string> read;
  for (const Entry &e : entries) {
    if ((e.link && plainFiles.count(e.real)) || !read.insert(e.real).second)
      continue;
    std::ifstream in(e.path, std::ios::binary | std::ios::ate);
    std::streamoff size = in ? std::streamoff(in.tellg()) : -1;
    size_t at = out.bytes.size();
    if (size >= 0) {
      out.bytes.resize(at + size_t(size));
      in.seekg(0);
      in.read(out.bytes.data() + at, size);
    }
    if (!in || in.gcount() != size) {
      error = "dataset 'text_bytes': cannot read '" + e.path + "'";
      return false;
    }
    out.files.push_back(e.path);
  }
  if (out.files.empty()) {
    error = "dataset 'text_bytes': no file in '" + source + "'";
    return false;
  }
  if (out.bytes.empty()) {
    error = "dataset 'text_bytes': the " + std::to_string(out.files.size()) + " file" +
            (out.files.size() == 1 ? "" : "s") + " of '" + source + "' are empty";
    return false;
  }
  return true;
}

TextSplits textSplits(int64_t bytes) {
  int64_t holdout = bytes / 20;
  return {bytes - 2 * holdout, bytes - holdout};
}

namespace datasets {

bool makeTextBytes(const DataArgs &args, uint64_t seed, const std::vector<TensorSpec> &inputs,
                   Dataset &out, std::string &error) {
  const std::string name = "text_bytes";
  if (!checkArgs(name, args,
                 {{"seq", ArgKind::Positive},
                  {"files", ArgKind::Text},
                  {"train", ArgKind::Count},
                  {"val", ArgKind::Count},
                  {"test", ArgKind::Count}},
                 error))
    return false;
  int64_t seq = intArg(args, "seq", sampleDim(inputs, 0, 0, 128));
  std::vector<ArraySpec> arrays = {{"tokens", DType::I32, {seq}}, {"targets", DType::I32, {seq}}};
  if (!checkInputs(name, arrays, inputs, error))
    return false;
  std::string source = args.count("files") ? textArg(args, "files") : kDefaultTextCorpus;
  auto corpus = std::make_shared<TextCorpus>();
  if (!readTextCorpus(source, *corpus, error))
    return false;

  const int64_t total = int64_t(corpus->bytes.size());
  TextSplits at = textSplits(total);
  const int64_t begins[3] = {0, at.valBegin, at.testBegin};
  const int64_t ends[3] = {at.valBegin, at.testBegin, total};
  const int64_t window = seq + 1;
  if (at.valBegin < window) {
    error = "dataset 'text_bytes': the training part of '" + source + "' (" +
            groupedNumber(at.valBegin) + " of its " + groupedNumber(total) +
            " bytes) is shorter than one window of seq + 1 = " + std::to_string(window) + " bytes";
    return false;
  }
  int64_t sizes[3];
  std::string parts;
  for (int k = 0; k < 3; ++k) {
    int64_t bytes = ends[k] - begins[k];
    int64_t fit = k == 0 ? bytes / seq : bytes >= window ? (bytes - 1) / seq : 0;
    sizes[k] = intArg(args, kSplitNames[k], fit);
    if (k == 0 && sizes[k] < 1) {
      error = "dataset 'text_bytes' needs at least one training sample (train: 0)";
      return false;
    }
    if (k > 0 && sizes[k] > fit) {
      error = "dataset 'text_bytes': " + std::string(kSplitNames[k]) + ": " +
              std::to_string(sizes[k]) + " windows, but the " + kSplitNames[k] + " part (" +
              groupedNumber(bytes) + " bytes) holds " + std::to_string(fit) + " windows of " +
              std::to_string(window) + " bytes at stride " + std::to_string(seq);
      return false;
    }
    parts += std::string(k ? ", " : "") + kSplitNames[k] + " " + groupedNumber(bytes) + " (" +
             groupedNumber(sizes[k]) + (k ? " windows)" : " random windows an epoch)");
  }
  out.notices.push_back("text_bytes: " + std::to_string(corpus->files.size()) + " file" +
                        (corpus->files.size() == 1 ? "" : "s") + " from " + source + ", " +
                        groupedNumber(total) + " bytes: " + parts);

  for (int k = 0; k < 3; ++k) {
    Split &split = *splitNamed(out, k);
    split.samples = sizes[k];
    const int64_t begin = begins[k], starts = ends[k] - window + 1 - begin;
    const uint32_t stream = k == 0 ? streamId(name + ".train") : 0;
    split.fill = [=](int64_t index, std::vector<Tensor> &batch, int64_t row) {
      int64_t offset = index * seq;
      if (k == 0)
        offset = int64_t(Draws(seed, stream, uint64_t(index)).below(uint64_t(starts)));
      const unsigned char *bytes =
          reinterpret_cast<const unsigned char *>(corpus->bytes.data()) + begin + offset;
      int32_t *tokens = batch[0].i32() + row * seq, *targets = batch[1].i32() + row * seq;
      for (int64_t j = 0; j < seq; ++j) {
        tokens[j] = bytes[j];
        targets[j] = bytes[j + 1];
      }
    };
  }
  return true;
}

} // namespace datasets
} // namespace tfc::rt
