# tfc's exit status: 0 success, 1 an error in the input, 2 a command line that
# does not parse (README, "Exit codes"); as the compiled binaries.
# RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(['tfc', 'compile', sys.argv[1], '--emit=mlir'], capture_output=True).returncode)" %s
# RUN: %python %S/Inputs/exit_status.py 1 tfc compile %t.missing.tf
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --batch 0
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --batch -3
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --batch abc
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --emit=bogus
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --no-such-flag
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile
# RUN: %python %S/Inputs/exit_status.py 2 tfc
# RUN: %python %S/Inputs/exit_status.py 0 tfc --help
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --batch 0 | FileCheck %s
# CHECK: tfc: error: --batch must be positive, got 0
# The backend table (compiler/lowering/Backend.h): an unknown target is a
# usage error naming the known ones; a known one this tfc cannot build, an
# error that says so; cpu is the default.
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=tpu | FileCheck %s --check-prefix=TPU
# TPU: tfc: error: unknown --target=tpu (known: cpu, cuda, cuda-emulated)
# --target=cuda without the CUDA toolkit says what is missing and where it
# looked (exit status 1); a GPU stage asked of the CPU target, or an image
# format tfc does not make, is a usage error.
# RUN: %python %S/Inputs/exit_status.py 1 tfc compile %s --target=cuda --cuda-path=%t.no-toolkit | FileCheck %s --check-prefix=CUDA
# CUDA: tfc: error: --target=cuda needs the CUDA toolkit: no CUDA toolkit at '{{.*}}no-toolkit' (install it, or name it with --cuda-path or CUDA_HOME)
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --emit=ptx | FileCheck %s --check-prefix=PTX-CPU
# PTX-CPU: tfc: error: --emit=ptx is a stage of --target=cuda, not of --target=cpu
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda --cuda-image=cubin | FileCheck %s --check-prefix=IMAGE
# IMAGE: tfc: error: --cuda-image must be fatbin or ptx, got 'cubin'
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --target=cpu --emit=linalg
model m {
  input x: f32[batch, 4]
  output y = relu(x)
}
