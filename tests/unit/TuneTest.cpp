//===- TuneTest.cpp - tune's choice of settings and the file that keeps it --===//
//
// chooseSettings on a made-up device whose step time and results are
// functions of its settings (no clock: the measurements are the test's),
// and the tuned settings' file: read, replaced line by line, kept whole
// when writing fails.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tune.h"
#include "runtime/TunedSettings.h"
#include "tests/unit/ScopedEnv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

using namespace tfc::rt;
using Outcome = TuneTrial::Outcome;
using Source = DeviceSetting::Source;

namespace {

/// Settings, a step time from them, results from them, and failures.
struct MadeUpDevice {
  struct Setting {
    std::vector<std::string> values;
    std::string value;
    Source source = Source::Default;
    std::function<bool(const MadeUpDevice &)> applies = [](const MadeUpDevice &) { return true; };
  };
  std::vector<std::pair<std::string, Setting>> settings;
  /// ms of a step, from the settings and how many measurements came before.
  std::function<double(const MadeUpDevice &, int)> time;
  /// The results, from the settings.
  std::function<std::vector<double>(const MadeUpDevice &)> results = [](const MadeUpDevice &) {
    return std::vector<double>{2.5, 0.75};
  };
  /// Whether a measurement fails, from the settings.
  std::function<bool(const MadeUpDevice &)> fails = [](const MadeUpDevice &) { return false; };
  int measurements = 0;

  std::string operator[](const std::string &name) const {
    for (const auto &[n, s] : settings)
      if (n == name)
        return s.value;
    return "";
  }

  TuneTarget target() {
    TuneTarget t;
    t.settings = [this] {
      std::vector<DeviceSetting> out;
      for (const auto &[name, s] : settings)
        out.push_back({name, s.values, s.value, s.source, s.applies(*this)});
      return out;
    };
    t.apply = [this](const std::string &name, const std::string &value, std::string &error) {
      for (auto &[n, s] : settings)
        if (n == name) {
          s.value = value;
          if (s.source == Source::Default)
            s.source = Source::Tuned;
          return true;
        }
      error = "no setting " + name;
      return false;
    };
    t.measure = [this](TuneMeasurement &m, std::string &error) {
      if (fails(*this)) {
        error = "an illegal address";
        return false;
      }
      m.ms = time(*this, measurements++);
      m.results = results(*this);
      return true;
    };
    return t;
  }
};

MadeUpDevice::Setting onOff(const std::string &value = "0") { return {{"0", "1"}, value}; }

} // namespace

TEST(Tune, KeepsWhatIsFasterAndAgrees) {
  MadeUpDevice d;
  d.settings = {
      {"A", onOff()},                      // 20% faster on
      {"B", {{"tiny", "1", "0"}, "tiny"}}, // 1: 10% slower; 0: wrong results
      {"C", onOff()},                      // 2% faster: under the threshold
      {"FIXED", {{"0", "1"}, "1", Source::Environment}},
      {"UNUSED", onOff()},        // applies to nothing the entry calls
      {"BROKEN", onOff()},        // 1: the step fails
      {"LUCKY", onOff()},         // 1: 5% faster once, then not
      {"NEEDS_A", onOff()},       // applies once A is on; 1: 10% faster
      {"OFF_FASTER", onOff("1")}, // 0: 10% faster (1, measured first, not tried again)
  };
  for (auto &[name, s] : d.settings)
    if (name == "UNUSED")
      s.applies = [](const MadeUpDevice &) { return false; };
    else if (name == "NEEDS_A")
      s.applies = [](const MadeUpDevice &dev) { return dev["A"] == "1"; };
  int luckyTries = 0;
  d.time = [&](const MadeUpDevice &dev, int) {
    double ms = 10;
    if (dev["A"] == "1")
      ms *= 0.8;
    if (dev["B"] == "1")
      ms *= 1.1;
    if (dev["C"] == "1")
      ms *= 0.98;
    if (dev["NEEDS_A"] == "1")
      ms *= 0.9;
    if (dev["OFF_FASTER"] == "0")
      ms *= 0.9;
    if (dev["LUCKY"] == "1")
      ms *= luckyTries++ == 0 ? 0.95 : 1.0;
    return ms;
  };
  d.results = [](const MadeUpDevice &dev) {
    return std::vector<double>{dev["B"] == "0" ? 3.5 : 2.5, 0.75};
  };
  d.fails = [](const MadeUpDevice &dev) { return dev["BROKEN"] == "1"; };

  TuneReport report;
  std::string error;
  std::vector<std::string> printed;
  ASSERT_TRUE(chooseSettings(d.target(), 0.03, 1e-3, report, error, [&](const TuneTrial &t) {
    printed.push_back(t.name + "=" + t.value);
  })) << error;
  std::vector<std::tuple<std::string, std::string, Outcome>> expected = {
      {"A", "1", Outcome::Kept},        {"B", "1", Outcome::Slower},
      {"B", "0", Outcome::Disagrees},   {"C", "1", Outcome::Slower},
      {"FIXED", "1", Outcome::Fixed},   {"UNUSED", "0", Outcome::Skipped},
      {"BROKEN", "1", Outcome::Failed}, {"LUCKY", "1", Outcome::Unconfirmed},
      {"NEEDS_A", "1", Outcome::Kept},  {"OFF_FASTER", "0", Outcome::Kept},
  };
  ASSERT_EQ(report.trials.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(report.trials[i].name, std::get<0>(expected[i])) << i;
    EXPECT_EQ(report.trials[i].value, std::get<1>(expected[i])) << i;
    EXPECT_EQ(report.trials[i].outcome, std::get<2>(expected[i])) << report.trials[i].name;
  }
  EXPECT_EQ(printed.size(), expected.size());
  EXPECT_EQ(report.trials[2].why, "result 0: 3.5 against 2.5");
  EXPECT_EQ(report.trials[6].why, "an illegal address");
  EXPECT_DOUBLE_EQ(report.trials[0].ms, 8);
  EXPECT_DOUBLE_EQ(report.trials[0].againMs, 8);
  EXPECT_DOUBLE_EQ(report.trials[0].bestAgainMs, 10);
  EXPECT_DOUBLE_EQ(report.defaultMs, 10);
  EXPECT_DOUBLE_EQ(report.chosenMs, 7.2 * 0.9);
  const NamedValues defaults = {{"A", "0"},     {"B", "tiny"},    {"C", "0"},
                                {"FIXED", "1"}, {"UNUSED", "0"},  {"BROKEN", "0"},
                                {"LUCKY", "0"}, {"NEEDS_A", "0"}, {"OFF_FASTER", "1"}};
  EXPECT_EQ(report.defaults, defaults);
  NamedValues chosen = defaults;
  chosen[0].second = "1";
  chosen[7].second = "1";
  chosen[8].second = "0";
  EXPECT_EQ(report.chosen, chosen);
  // The device is left as chosen.
  EXPECT_EQ(d["A"], "1");
  EXPECT_EQ(d["B"], "tiny");
  EXPECT_EQ(d["BROKEN"], "0");
  EXPECT_EQ(d["LUCKY"], "0");
}

// A tolerance scaled by the reference: within it agrees, past it does not;
// NaN agrees with NaN alone.
TEST(Tune, ResultsAgreeWithinTheTolerance) {
  std::string why;
  EXPECT_TRUE(resultsAgree({2.001, 0}, {2.0, 0}, 1e-3, why));
  EXPECT_FALSE(resultsAgree({2.01, 0}, {2.0, 0}, 1e-3, why));
  EXPECT_EQ(why, "result 0: 2.01 against 2");
  EXPECT_TRUE(resultsAgree({1000.5}, {1000}, 1e-3, why));
  EXPECT_TRUE(resultsAgree({NAN}, {NAN}, 1e-3, why));
  EXPECT_FALSE(resultsAgree({NAN}, {1}, 1e-3, why));
  EXPECT_FALSE(resultsAgree({1}, {NAN}, 1e-3, why));
  EXPECT_FALSE(resultsAgree({1, 2}, {1}, 1e-3, why));
  EXPECT_EQ(why, "2 numbers against 1");
}

TEST(Tune, FailuresThatLeaveNothingToKeep) {
  std::string error;
  TuneReport report;
  {
    // The defaults fail: nothing to measure against.
    MadeUpDevice d;
    d.settings = {{"A", onOff()}};
    d.time = [](const MadeUpDevice &, int) { return 1.0; };
    d.fails = [](const MadeUpDevice &) { return true; };
    EXPECT_FALSE(chooseSettings(d.target(), 0.03, 1e-3, report, error));
    EXPECT_EQ(error, "the step under the settings it started from failed: an illegal address");
  }
  {
    // Results that are not finite: nothing to hold a try to.
    MadeUpDevice d;
    d.settings = {{"A", onOff()}};
    d.time = [](const MadeUpDevice &, int) { return 1.0; };
    d.results = [](const MadeUpDevice &) { return std::vector<double>{INFINITY}; };
    EXPECT_FALSE(chooseSettings(d.target(), 0.03, 1e-3, report, error));
    EXPECT_NE(error.find("not finite (inf)"), std::string::npos) << error;
  }
  {
    // A try that breaks the device for good (a GPU's context lost): the
    // best settings fail after it too.
    MadeUpDevice d;
    d.settings = {{"A", onOff()}, {"B", onOff()}};
    bool broken = false;
    d.time = [](const MadeUpDevice &, int) { return 1.0; };
    d.fails = [&](const MadeUpDevice &dev) { return broken = broken || dev["A"] == "1"; };
    EXPECT_FALSE(chooseSettings(d.target(), 0.03, 1e-3, report, error));
    EXPECT_EQ(error, "after A=1 failed, the step failed on the best settings too: an illegal "
                     "address");
  }
}

namespace {
std::string temporaryPath(const std::string &name) {
  return testing::TempDir() + "/tfc-tune-" + std::to_string(getpid()) + "-" + name;
}
std::string contents(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
} // namespace

TEST(TunedSettings, KeptALineAKey) {
  const std::string path = temporaryPath("dir/tuned.txt"); // the directory is made
  std::remove(path.c_str());
  std::string error;
  NamedValues read;
  EXPECT_FALSE(readTunedSettings(path, "model m 1, GPU", read));
  ASSERT_TRUE(
      writeTunedSettings(path, "model m 1, GPU", {{"TFC_A", "1"}, {"TFC_B", "tiny"}}, error))
      << error;
  ASSERT_TRUE(writeTunedSettings(path, "model n 2, GPU", {{"TFC_A", "0"}}, error)) << error;
  EXPECT_EQ(contents(path), "model m 1, GPU\tTFC_A=1 TFC_B=tiny\nmodel n 2, GPU\tTFC_A=0\n");
  ASSERT_TRUE(readTunedSettings(path, "model m 1, GPU", read));
  EXPECT_EQ(read, (NamedValues{{"TFC_A", "1"}, {"TFC_B", "tiny"}}));
  // A key is a whole key: one that starts the same is another.
  EXPECT_FALSE(readTunedSettings(path, "model m 1", read));
  EXPECT_TRUE(read.empty());
  // Tuned again: its line replaced, the others kept.
  ASSERT_TRUE(writeTunedSettings(path, "model m 1, GPU", {{"TFC_A", "0"}}, error)) << error;
  EXPECT_EQ(contents(path), "model n 2, GPU\tTFC_A=0\nmodel m 1, GPU\tTFC_A=0\n");
  // A model's lines, GPU by GPU (info lists them).
  ASSERT_TRUE(writeTunedSettings(path, "model m 1, another GPU", {{"TFC_B", "1"}}, error));
  const auto lines = tunedSettingsFor(path, "model m 1, ");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].first, "model m 1, GPU");
  EXPECT_EQ(lines[0].second, (NamedValues{{"TFC_A", "0"}}));
  EXPECT_EQ(lines[1].first, "model m 1, another GPU");
  EXPECT_TRUE(tunedSettingsFor(path, "model x ").empty());
  EXPECT_TRUE(tunedSettingsFor("", "model m 1, ").empty());
  std::ofstream(path, std::ios::trunc) << "model n 2, GPU\tTFC_A=0\nmodel m 1, GPU\tTFC_A=0\n";
  // What cannot be read back is refused, the file untouched.
  EXPECT_FALSE(writeTunedSettings(path, "a\tkey", {{"TFC_A", "0"}}, error));
  EXPECT_FALSE(writeTunedSettings(path, "k", {{"TFC_A", "0 1"}}, error));
  EXPECT_EQ(error, "setting 'TFC_A=0 1' cannot be kept");
  EXPECT_FALSE(writeTunedSettings(path, "k", {{"", "0"}}, error));
  EXPECT_EQ(contents(path), "model n 2, GPU\tTFC_A=0\nmodel m 1, GPU\tTFC_A=0\n");
  // A malformed line is no line: the defaults stand.
  std::ofstream(path, std::ios::app) << "broken\tTFC_A\n";
  EXPECT_FALSE(readTunedSettings(path, "broken", read));
  EXPECT_TRUE(read.empty());
  // A file that cannot be written leaves the old one whole.
  EXPECT_FALSE(writeTunedSettings(path + "/not-a-dir/x", "k", {{"TFC_A", "1"}}, error));
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
  EXPECT_FALSE(writeTunedSettings("", "k", {{"TFC_A", "1"}}, error));
}

TEST(TunedSettings, WhereTheFileIs) {
  using tfc::test::ScopedEnv;
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv cache("TFC_TUNE_CACHE", nullptr), xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(tunedSettingsPath(), "/home/someone/.cache/tfc/tuned-settings.txt");
  }
  {
    ScopedEnv cache("TFC_TUNE_CACHE", nullptr), xdg("XDG_CACHE_HOME", "/var/cache/me");
    EXPECT_EQ(tunedSettingsPath(), "/var/cache/me/tfc/tuned-settings.txt");
  }
  {
    // The XDG spec ignores a relative XDG_CACHE_HOME.
    ScopedEnv cache("TFC_TUNE_CACHE", nullptr), xdg("XDG_CACHE_HOME", "relative");
    EXPECT_EQ(tunedSettingsPath(), "/home/someone/.cache/tfc/tuned-settings.txt");
  }
  {
    ScopedEnv cache("TFC_TUNE_CACHE", "/tmp/mine.txt");
    EXPECT_EQ(tunedSettingsPath(), "/tmp/mine.txt");
  }
  {
    ScopedEnv cache("TFC_TUNE_CACHE", "none");
    EXPECT_EQ(tunedSettingsPath(), "");
  }
}
