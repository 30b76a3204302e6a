# lit configuration for tfc: tf-opt and tfc tests checked with FileCheck.
import os
import sys
import lit.formats
from lit.llvm import llvm_config

config.name = "tfc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tf"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfc_obj_root, "tests", "lit")
config.substitutions.append(("%models", os.path.join(config.tfc_src_root, "models")))
# The CPU runtime an object of --emit=obj links with (as tfc links an executable).
config.substitutions.append(("%tfc_runtime", os.path.join(config.tfc_tools_dir, os.pardir, "lib",
                                                          "libtfc_runtime.a")))
# Test helpers in Inputs/ run on the interpreter that runs lit (no numpy needed).
config.substitutions.append(("%python", sys.executable))

# The CUDA toolkit (ptxas, libdevice) for the tests of PTX: where tfc looks
# for it by default ($CUDA_HOME, else /usr/local/cuda), passed to it as
# --cuda-path=%cuda since lit does not pass the environment on.
cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
if os.access(os.path.join(cuda_home, "bin", "ptxas"), os.X_OK):
    config.available_features.add("cuda-toolkit")
config.substitutions.append(("%cuda", cuda_home))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.tfc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tools = [t for t in ["tf-opt", "tfc", "tfc-models", "tfc-dsl-examples"]
         if os.path.exists(os.path.join(config.tfc_tools_dir, t))]
llvm_config.add_tool_substitutions(tools, [config.tfc_tools_dir])
