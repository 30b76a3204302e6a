# --emit=linalg builds the entry functions and lowers them to linalg on
# tensors; --dump-ir writes the front end's module, then one file per pass.
# RUN: tfc compile %s --emit=linalg | FileCheck %s
# RUN: rm -rf %t && tfc compile %s --emit=linalg --dump-ir=%t -o %t.out
# RUN: FileCheck %s --check-prefix=MLIR --input-file=%t/00-mlir.mlir
# RUN: FileCheck %s --check-prefix=ENTRY --input-file=%t/02-tf-entry-points.mlir
# RUN: FileCheck %s --input-file=%t/08-tf-lower-to-linalg.mlir
# RUN: FileCheck %s --check-prefix=DUMP --input-file=%t/09-canonicalize.mlir
# RUN: FileCheck %s --input-file=%t.out

# MLIR: func.func @m
# MLIR: tf.exp
# ENTRY: func.func @predict
# ENTRY: tf.exp
# DUMP: IR Dump After Canonicalizer (canonicalize)
# DUMP: linalg.generic
# CHECK-LABEL: func.func @predict
# CHECK-NOT: tf.exp
# CHECK: linalg.generic
# CHECK: math.exp

model m {
  input x: f32[4, 2]
  output y = exp(x)
}
