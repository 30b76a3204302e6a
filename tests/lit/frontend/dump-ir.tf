# --dump-ir writes one numbered file per stage and pass.
# RUN: rm -rf %t && tfc compile %s --emit=mlir --dump-ir=%t -o %t.out
# RUN: FileCheck %s --input-file=%t/00-mlir.mlir
# RUN: diff %t/00-mlir.mlir %t.out

# CHECK: func.func @m(%{{.*}}: tensor<4x2xf32> {tf.input = "x"}) -> (tensor<4x2xf32> {tf.output = "y"})
# CHECK: tf.exp

model m {
  input x: f32[4, 2]
  output y = exp(x)
}
