# The same model compiles to the same IR on every run. Before
# tf-constant-globals, One-Shot Bufferize made the constants' globals in an
# order MLIR 19 takes from a pointer-keyed map: reverse's CUDA buffers IR
# came out two ways in six runs (the globals' order), the medium encoder's
# too.
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %models/reverse.tf --target=cuda --emit=buffers -o %t/1.mlir
# RUN: tfc compile %models/reverse.tf --target=cuda --emit=buffers -o %t/2.mlir
# RUN: tfc compile %models/reverse.tf --target=cuda --emit=buffers -o %t/3.mlir
# RUN: tfc compile %models/reverse.tf --target=cuda --emit=buffers -o %t/4.mlir
# RUN: cmp %t/1.mlir %t/2.mlir
# RUN: cmp %t/1.mlir %t/3.mlir
# RUN: cmp %t/1.mlir %t/4.mlir
# And the globals in program order, before the functions.
# RUN: FileCheck %s < %t/1.mlir
# CHECK: memref.global "private" constant @__constant_
# CHECK: func.func @train_step(
