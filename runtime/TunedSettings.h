//===- TunedSettings.h - device settings `tune` chose, kept between runs --===//
//
// `MODEL tune` (runtime/Tune.h) times a model's train step under its
// device's settings (Device.h's DeviceSetting: a GPU's TFC_* switches) and
// keeps the fastest whose results agree with the defaults' in one text
// file, a line a model and device:
//
//   KEY<TAB>NAME=VALUE NAME=VALUE ...
//
// KEY is Device::tuningKey() (the GPU, its driver and libraries, and the
// compiled model), so a line holds only for the binary and GPU it was
// measured on. The file is TFC_TUNE_CACHE ("none": no file), else
// $XDG_CACHE_HOME/tfc/tuned-settings.txt (an absolute XDG_CACHE_HOME), else
// ~/.cache/tfc/tuned-settings.txt. A device applies its line at open()
// unless DeviceOptions::tuned is false (TFC_TUNED=0); a setting's
// environment variable, where set, wins over it.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TUNEDSETTINGS_H
#define TFC_RUNTIME_TUNEDSETTINGS_H

#include <string>
#include <utility>
#include <vector>

namespace tfc::rt {

using NamedValues = std::vector<std::pair<std::string, std::string>>;

/// `file` in the user's cache directory, or the path `override` (an
/// environment variable) names; "" where it names "none" or there is no
/// home to keep it in.
std::string userCacheFile(const char *override, const std::string &file);

/// The tuned settings' file (userCacheFile("TFC_TUNE_CACHE", ...)).
std::string tunedSettingsPath();

/// The settings kept for `key` in the file at `path`: false where the file
/// or its line is missing, or the line is malformed (then nothing is
/// applied: the defaults stand).
bool readTunedSettings(const std::string &path, const std::string &key, NamedValues &settings);

/// Every well-formed line of the file at `path` whose key starts with
/// `prefix` (a model's, for each GPU it was tuned on), in the file's order.
std::vector<std::pair<std::string, NamedValues>> tunedSettingsFor(const std::string &path,
                                                                  const std::string &prefix);

/// Keeps `settings` as `key`'s line of the file at `path`, replacing any
/// line of that key and keeping the others; written to a temporary file
/// and renamed over it, so a failure leaves the old file whole. False with
/// `error` set.
bool writeTunedSettings(const std::string &path, const std::string &key,
                        const NamedValues &settings, std::string &error);

/// "NAME=VALUE NAME=VALUE".
std::string formatSettings(const NamedValues &settings);

} // namespace tfc::rt

#endif // TFC_RUNTIME_TUNEDSETTINGS_H
