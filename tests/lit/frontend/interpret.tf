# `tfc interpret`: one entry through the reference interpreter in double
# precision, with the compiled binary's `run` arguments and result files.
# The binary's predict agrees with it; every mistake in the command line is
# an error that names it (exit status 1), a missing option a usage error (2).
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %models/reverse.tf --batch 2 -o %t/m
# RUN: %t/m init --seed 1 --out %t/p.safetensors
# RUN: %python %S/Inputs/write_tokens.py %t/tokens.npy 2 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4
# RUN: %python %S/Inputs/write_tokens.py %t/short.npy 1 1 2 3
# RUN: %t/m run predict --params %t/p.safetensors --feed tokens=%t/tokens.npy --output-dir %t/binary
# RUN: tfc interpret %models/reverse.tf predict --batch 2 --params %t/p.safetensors \
# RUN:   --feed input:tokens=%t/tokens.npy --output-dir %t/oracle | FileCheck %s
# CHECK: wrote 1 results of 'predict' to {{.*}}oracle (float64: the reference interpreter)
# RUN: %python -c "import sys; sys.path.insert(0, sys.argv[1]); import parity; \
# RUN:   values, shape = parity.read_npy(sys.argv[2] + '/output.logits.npy', with_shape=True); \
# RUN:   print('shape', shape); w, _ = parity.compare(sys.argv[2], sys.argv[3], ['output.logits.npy'], 0); \
# RUN:   print('within 1e-6' if w <= 1e-6 else f'apart {w}')" \
# RUN:   %S/../../../tools/gpu %t/oracle %t/binary | FileCheck %s --check-prefix=AGREE
# AGREE: shape (2, 16, 10)
# AGREE-NEXT: within 1e-6

# RUN: %python %S/Inputs/exit_status.py 1 tfc interpret %models/reverse.tf generate --batch 2 \
# RUN:   --params %t/p.safetensors --output-dir %t/x | FileCheck %s --check-prefix=ENTRY
# ENTRY: tfc: error: no entry 'generate' (this model has: train_step, grad_step, apply_step, predict, evaluate)
# RUN: %python %S/Inputs/exit_status.py 1 tfc interpret %models/reverse.tf predict --batch 2 \
# RUN:   --params %t/p.safetensors --output-dir %t/x | FileCheck %s --check-prefix=MISSING
# MISSING: tfc: error: 'predict' needs i32 [2, 16] input:tokens: feed it as --feed input:tokens=FILE.npy
# RUN: %python %S/Inputs/exit_status.py 1 tfc interpret %models/reverse.tf predict --batch 2 \
# RUN:   --params %t/p.safetensors --feed tokens=%t/short.npy --output-dir %t/x | FileCheck %s --check-prefix=SHAPE
# SHAPE: tfc: error: '{{.*}}short.npy' (input:tokens) is i32 [1, 3], but the argument is i32 [2, 16]
# RUN: %python %S/Inputs/exit_status.py 1 tfc interpret %models/reverse.tf predict --batch 2 \
# RUN:   --params %t/p.safetensors --feed tokens=%t/tokens.npy --feed step:step=%t/tokens.npy \
# RUN:   --output-dir %t/x | FileCheck %s --check-prefix=EXTRA
# EXTRA: tfc: error: 'predict' has no argument step:step (fed from '{{.*}}tokens.npy')
# RUN: %python %S/Inputs/exit_status.py 1 tfc interpret %models/reverse.tf predict --batch 2 \
# RUN:   --feed tokens=%t/tokens.npy --output-dir %t/x | FileCheck %s --check-prefix=PARAMS
# PARAMS: tfc: error: 'predict' takes the parameters: name a file with --params
# RUN: %python %S/Inputs/exit_status.py 1 tfc interpret %models/reverse.tf predict --batch 4 \
# RUN:   --params %t/p.safetensors --feed tokens=%t/tokens.npy --output-dir %t/x | FileCheck %s --check-prefix=BATCH
# BATCH: tfc: error: '{{.*}}tokens.npy' (input:tokens) is i32 [2, 16], but the argument is i32 [4, 16]
# RUN: %python %S/Inputs/write_tokens.py %t/big.npy 2 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 10
# RUN: %python %S/Inputs/exit_status.py 1 tfc interpret %models/reverse.tf predict --batch 2 \
# RUN:   --params %t/p.safetensors --feed tokens=%t/big.npy --output-dir %t/x | FileCheck %s --check-prefix=RANGE
# RANGE: tfc: error: the interpreter: one_hot: index 10 is out of range [0, 10)
# RUN: %python %S/Inputs/exit_status.py 2 tfc interpret %models/reverse.tf predict | FileCheck %s --check-prefix=USAGE
# USAGE: --output-dir option: must be specified at least once
