"""gpu_bench.best_ratio on the sixteenth session's H200 times (gpu-bench.tf)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "tools", "bench"))
import gpu_bench  # noqa: E402

print(gpu_bench.best_ratio({"tfc": 220.0, "tfc_tf32": 13.2, "tfc_bf16": 1.0, "eager": 13.3, "compile": 11.6}))
print(gpu_bench.best_ratio({"tfc": 0.333, "tfc_persistent": 0.691, "jax": 1.8, "graphs": 1.9}))
print(gpu_bench.best_ratio({"tfc": 0.333, "tfc_bf16": 0.325}))
