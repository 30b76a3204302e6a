//===- ScopedEnv.h - an environment variable set for a scope --------------===//

#ifndef TFC_TESTS_UNIT_SCOPEDENV_H
#define TFC_TESTS_UNIT_SCOPEDENV_H

#include <cstdlib>
#include <string>

namespace tfc::test {

/// Sets (or, with a null value, unsets) an environment variable for the
/// scope, restoring it after.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name_;
  bool had_ = false;
  std::string old_;
};

} // namespace tfc::test

#endif // TFC_TESTS_UNIT_SCOPEDENV_H
