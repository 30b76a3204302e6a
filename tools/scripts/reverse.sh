#!/usr/bin/env bash
# The main job: build tfc and compile models/reverse.tf. Until code
# generation and training land, this prints the model's tf IR.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"
"$root/tools/scripts/build.sh" tfc
"$build/bin/tfc" compile "$root/models/reverse.tf" --emit=mlir
