//===- Command.h - running commands and temp dirs in end-to-end tests ----===//

#ifndef TFC_TESTS_E2E_COMMAND_H
#define TFC_TESTS_E2E_COMMAND_H

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>

namespace tfc::e2e {

struct CommandResult {
  int status = -1;
  std::string output; // stdout and stderr
};

/// Runs `command` through the shell and returns its exit status and output.
inline CommandResult run(const std::string &command) {
  CommandResult result;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    result.output.append(buffer, n);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// The whole of file `path` ("" when it cannot be read).
inline std::string fileBytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

/// How many times `what` occurs in `text`.
/// `text`'s lines, without their newlines.
inline std::vector<std::string> linesOf(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

inline size_t countOf(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// The rest of the line of `text` where `what` first appears, from it; ""
/// where it does not.
inline std::string lineWith(const std::string &text, const std::string &what) {
  const size_t at = text.find(what);
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

/// A fresh directory under the test's temp dir ("" on failure).
/// The directories makeTempDir made, removed when the test program ends if
/// every test passed; a failure keeps them (their paths are printed) to look
/// at, as does TFC_KEEP_TEST_DIRS=1. A compiled model's run leaves hundreds
/// of MiB there: kept, repeated runs filled a disk.
class TempDirs {
public:
  static TempDirs &instance() {
    static TempDirs dirs;
    return dirs;
  }
  void add(const std::string &dir) { dirs_.push_back(dir); }
  ~TempDirs() {
    const char *keep = std::getenv("TFC_KEEP_TEST_DIRS");
    const bool passed = ::testing::UnitTest::GetInstance()->Passed();
    for (const std::string &dir : dirs_) {
      std::error_code ignored;
      if (passed && !(keep && *keep && std::string(keep) != "0"))
        std::filesystem::remove_all(dir, ignored);
      else
        std::fprintf(stderr, "kept %s\n", dir.c_str());
    }
  }

private:
  TempDirs() = default;
  std::vector<std::string> dirs_;
};

inline std::string makeTempDir(const std::string &prefix) {
  std::string pattern = ::testing::TempDir() + "/" + prefix + "-XXXXXX";
  char *dir = mkdtemp(pattern.data());
  if (!dir)
    return "";
  TempDirs::instance().add(dir);
  return dir;
}

} // namespace tfc::e2e

#endif // TFC_TESTS_E2E_COMMAND_H
