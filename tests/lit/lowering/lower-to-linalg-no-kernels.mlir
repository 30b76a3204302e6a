// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg=kernels=none --verify-diagnostics | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg | FileCheck %s --check-prefix=CPU

// Without kernels (a backend whose runtime has none), attention becomes
// loops; with the CPU's (the default), a call of its fused kernel.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: call @tfc_attention_forward
// CHECK: linalg.generic
// CPU-LABEL: func.func @attention
// CPU: call @tfc_attention_forward
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x3xf32>) -> tensor<2x4x3xf32> {
  %o = tf.attention %q, %k, %v scale 0.353553385 : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32> -> tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

// -----

// attention_grad has no loops of its own: without kernels, tf-decompose
// must have run.
func.func @attention_grad(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x3xf32>, %g: tensor<2x4x3xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{tf.attention_grad has no lowering without the CPU runtime's kernels; run tf-decompose first}}
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v grad %g scale 0.353553385 : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>, tensor<2x4x3xf32> -> tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>
  return %dq : tensor<2x4x8xf32>
}
