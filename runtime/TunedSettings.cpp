//===- TunedSettings.cpp - device settings `tune` chose, kept between runs ===//

#include "runtime/TunedSettings.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace tfc::rt {

std::string userCacheFile(const char *override, const std::string &file) {
  if (const char *setting = std::getenv(override); setting && *setting)
    return std::string(setting) == "none" ? "" : setting;
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  const char *home = std::getenv("HOME");
  if (xdg && xdg[0] == '/') // the XDG spec ignores a relative one
    return std::string(xdg) + "/tfc/" + file;
  if (home && *home)
    return std::string(home) + "/.cache/tfc/" + file;
  return "";
}

std::string tunedSettingsPath() { return userCacheFile("TFC_TUNE_CACHE", "tuned-settings.txt"); }

namespace {
/// "NAME=VALUE ..." as pairs; false where a word has no '=' or no name.
bool parseSettings(const std::string &text, NamedValues &settings) {
  settings.clear();
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const size_t equals = word.find('=');
    if (equals == std::string::npos || equals == 0)
      return false;
    settings.emplace_back(word.substr(0, equals), word.substr(equals + 1));
  }
  return true;
}
} // namespace

bool readTunedSettings(const std::string &path, const std::string &key, NamedValues &settings) {
  settings.clear();
  if (path.empty())
    return false;
  std::ifstream in(path);
  std::string line;
  bool found = false;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || line.compare(0, tab, key) != 0 || tab != key.size())
      continue;
    found = parseSettings(line.substr(tab + 1), settings); // a later line wins
    if (!found)
      settings.clear();
  }
  return found;
}

std::vector<std::pair<std::string, NamedValues>> tunedSettingsFor(const std::string &path,
                                                                  const std::string &prefix) {
  std::vector<std::pair<std::string, NamedValues>> found;
  if (path.empty())
    return found;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    NamedValues settings;
    if (tab != std::string::npos && line.rfind(prefix, 0) == 0 &&
        parseSettings(line.substr(tab + 1), settings))
      found.emplace_back(line.substr(0, tab), settings);
  }
  return found;
}

std::string formatSettings(const NamedValues &settings) {
  std::string text;
  for (const auto &[name, value] : settings)
    text += (text.empty() ? "" : " ") + name + "=" + value;
  return text;
}

bool writeTunedSettings(const std::string &path, const std::string &key,
                        const NamedValues &settings, std::string &error) {
  if (path.empty()) {
    error = "no file to keep them in (TFC_TUNE_CACHE=none, or no HOME)";
    return false;
  }
  if (key.empty() || key.find_first_of("\t\n") != std::string::npos) {
    error = "the device gave no usable key for them";
    return false;
  }
  for (const auto &[name, value] : settings)
    if (name.empty() || (name + value).find_first_of("= \t\n") != std::string::npos) {
      error = "setting '" + name + "=" + value + "' cannot be kept";
      return false;
    }
  std::string kept;
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line.rfind(key + "\t", 0) != 0)
        kept += line + "\n";
  }
  kept += key + "\t" + formatSettings(settings) + "\n";
  const std::filesystem::path file(path);
  std::error_code ec;
  if (file.has_parent_path())
    std::filesystem::create_directories(file.parent_path(), ec);
  const std::string temporary = path + ".tmp" + std::to_string(getpid());
  std::FILE *out = std::fopen(temporary.c_str(), "w");
  if (!out) {
    error = "cannot write " + temporary;
    return false;
  }
  const bool written = std::fwrite(kept.data(), 1, kept.size(), out) == kept.size();
  if (std::fclose(out) != 0 || !written) {
    std::remove(temporary.c_str());
    error = "cannot write " + temporary + " (disk full?)";
    return false;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    error = "cannot replace " + path;
    return false;
  }
  return true;
}

} // namespace tfc::rt
