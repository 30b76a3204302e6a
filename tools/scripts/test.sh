#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs ctest
# (lit + FileCheck, GoogleTest, fuzzing, sanitizer builds).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"
"$root/tools/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j2
