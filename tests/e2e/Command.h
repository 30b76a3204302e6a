//===- Command.h - running commands and temp dirs in end-to-end tests ----===//

#ifndef TFC_TESTS_E2E_COMMAND_H
#define TFC_TESTS_E2E_COMMAND_H

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
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

/// A fresh directory under the test's temp dir ("" on failure).
inline std::string makeTempDir(const std::string &prefix) {
  std::string pattern = ::testing::TempDir() + "/" + prefix + "-XXXXXX";
  char *dir = mkdtemp(pattern.data());
  return dir ? dir : "";
}

} // namespace tfc::e2e

#endif // TFC_TESTS_E2E_COMMAND_H
