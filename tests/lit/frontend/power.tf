# `**` as Python's: right-associative, tighter than a '-' on its left;
# integer powers by multiplications, 0.5 as sqrt, others as exp(k log x);
# constants fold (an int stays an int unless the exponent is negative).
# RUN: tfc compile %s --emit=mlir --batch 1 | FileCheck %s
# RUN: sed 's/output h = .*/output h = x * 3 ** 40/' %s > %t.tf
# RUN: not tfc compile %t.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=OVERFLOW
# CHECK: %[[A:[0-9]+]] = tf.mul %arg0, %arg0
# CHECK: %[[B0:[0-9]+]] = tf.mul %arg0, %arg0
# CHECK: %[[B:[0-9]+]] = tf.neg %[[B0]]
# CHECK: %[[L2:[0-9]+]] = tf.log %{{[0-9]+}} : tensor<f32>
# CHECK: tf.exp
# CHECK: %[[D:[0-9]+]] = tf.div %{{[0-9]+}}, %arg0
# CHECK: %[[E:[0-9]+]] = tf.sqrt %arg0
# CHECK: %[[F0:[0-9]+]] = tf.mul %arg0, %arg0
# CHECK: %[[F:[0-9]+]] = tf.mul %[[F0]], %[[F0]]
# CHECK: tf.constant dense<8.000000e+00>
# CHECK: tf.constant dense<5.000000e-01>
# OVERFLOW: error: integer overflow in '**'
model p {
  input x: f32[batch, 3]
  output a = x ** 2
  output b = -x ** 2
  output c = 2 ** x
  output d = x ** -1
  output e = x ** 0.5
  output f = x ** 2 ** 2
  output h = x * (2 ** 3) + 2 ** -1
}
