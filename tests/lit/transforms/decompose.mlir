// RUN: tf-opt --split-input-file --tf-decompose %s | FileCheck %s
// RUN: tf-opt --split-input-file --tf-decompose=ops=attention %s | FileCheck %s --check-prefix=ONLY
// RUN: tf-opt --split-input-file --tf-decompose --tf-lower-to-linalg %s | FileCheck %s --check-prefix=LINALG
// RUN: not tf-opt --tf-decompose=ops=softmax %s 2>&1 | FileCheck %s --check-prefix=BAD

// Decomposed, nothing of the five reaches the CPU lowering as a runtime call:
// LINALG-NOT: call @tfc_
// LINALG-NOT: tf.
// BAD: tf-decompose: unknown op 'softmax' in ops

// Multi-head attention ([batch, heads, T, D]) under a mask: q k^T with k
// transposed by the matmul's flag, the scale, the tutorials' fill of the
// false entries, softmax over the keys, then the weights times v.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x4x8xf32>, %[[K:.+]]: tensor<2x2x5x8xf32>, %[[V:.+]]: tensor<2x2x5x3xf32>, %[[M:.+]]: tensor<2x2x4x5xi1>)
// CHECK-NOT: tf.attention
// CHECK: %[[S:.+]] = tf.matmul %[[Q]], %[[K]] transpose_rhs : tensor<2x2x4x8xf32>, tensor<2x2x5x8xf32> -> tensor<2x2x4x5xf32>
// CHECK: %[[SC:.+]] = tf.constant dense<0.353553385> : tensor<2x2x4x5xf32>
// CHECK: %[[SS:.+]] = tf.mul %[[S]], %[[SC]]
// CHECK: %[[FILL:.+]] = tf.constant dense<-9.000000e+15> : tensor<2x2x4x5xf32>
// CHECK: %[[SM:.+]] = tf.select %[[M]], %[[SS]], %[[FILL]]
// CHECK: %[[P:.+]] = tf.softmax %[[SM]] axis 3 : tensor<2x2x4x5xf32>
// CHECK: %[[O:.+]] = tf.matmul %[[P]], %[[V]] : tensor<2x2x4x5xf32>, tensor<2x2x5x3xf32> -> tensor<2x2x4x3xf32>
// CHECK-NOT: tf.attention
// CHECK: return %[[O]]
// ONLY-LABEL: func.func @attention
// ONLY-NOT: tf.attention
// ONLY: tf.softmax
func.func @attention(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x3xf32>, %m: tensor<2x2x4x5xi1>) -> tensor<2x2x4x3xf32> {
  %o = tf.attention %q, %k, %v mask %m scale 0.353553385 : tensor<2x2x4x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x3xf32>, tensor<2x2x4x5xi1> -> tensor<2x2x4x3xf32>
  return %o : tensor<2x2x4x3xf32>
}

// -----

// With its weights as a second result, the softmax is returned.
// CHECK-LABEL: func.func @attention_weights
// CHECK-NOT: tf.attention
// CHECK: %[[S:.+]] = tf.matmul %arg0, %arg1 transpose_rhs
// CHECK: %[[SS:.+]] = tf.mul %[[S]]
// CHECK-NOT: tf.select
// CHECK: %[[P:.+]] = tf.softmax %[[SS]] axis 1 : tensor<3x4xf32>
// CHECK: %[[O:.+]] = tf.matmul %[[P]], %arg2 : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x2xf32>
// CHECK: return %[[O]], %[[P]]
func.func @attention_weights(%q: tensor<3x2xf32>, %k: tensor<4x2xf32>, %v: tensor<4x2xf32>) -> (tensor<3x2xf32>, tensor<3x4xf32>) {
  %o, %w = tf.attention %q, %k, %v scale 0.707106769 with_weights : tensor<3x2xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<3x2xf32>, tensor<3x4xf32>
  return %o, %w : tensor<3x2xf32>, tensor<3x4xf32>
}

// -----

// P recomputed; dV = P^T dO, dP = dO V^T, dS = P (dP - Σ_row dP P) scale,
// zero where masked; dQ = dS K, dK = dS^T Q. Transposes are matmul flags.
// CHECK-LABEL: func.func @attention_grad
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8xf32>, %[[K:.+]]: tensor<2x5x8xf32>, %[[V:.+]]: tensor<2x5x3xf32>, %[[M:.+]]: tensor<2x4x5xi1>, %[[DO:.+]]: tensor<2x4x3xf32>)
// CHECK-NOT: tf.attention_grad
// CHECK: %[[S:.+]] = tf.matmul %[[Q]], %[[K]] transpose_rhs
// CHECK: %[[SS:.+]] = tf.mul %[[S]]
// CHECK: %[[SM:.+]] = tf.select %[[M]], %[[SS]]
// CHECK: %[[P:.+]] = tf.softmax %[[SM]] axis 2 : tensor<2x4x5xf32>
// CHECK: %[[DV:.+]] = tf.matmul %[[P]], %[[DO]] transpose_lhs : tensor<2x4x5xf32>, tensor<2x4x3xf32> -> tensor<2x5x3xf32>
// CHECK: %[[DP:.+]] = tf.matmul %[[DO]], %[[V]] transpose_rhs : tensor<2x4x3xf32>, tensor<2x5x3xf32> -> tensor<2x4x5xf32>
// CHECK: %[[DPP:.+]] = tf.mul %[[DP]], %[[P]]
// CHECK: %[[ROW:.+]] = tf.reduce_sum %[[DPP]] [2] : tensor<2x4x5xf32> -> tensor<2x4xf32>
// CHECK: %[[ROWB:.+]] = tf.broadcast_in_dim %[[ROW]] [0, 1] : tensor<2x4xf32> to tensor<2x4x5xf32>
// CHECK: %[[C:.+]] = tf.sub %[[DP]], %[[ROWB]]
// CHECK: %[[SC:.+]] = tf.constant dense<0.353553385> : tensor<2x4x5xf32>
// CHECK: %[[PC:.+]] = tf.mul %[[P]], %[[C]]
// CHECK: %[[DS0:.+]] = tf.mul %[[PC]], %[[SC]]
// CHECK: %[[Z:.+]] = tf.constant dense<0.000000e+00> : tensor<2x4x5xf32>
// CHECK: %[[DS:.+]] = tf.select %[[M]], %[[DS0]], %[[Z]]
// CHECK: %[[DQ:.+]] = tf.matmul %[[DS]], %[[K]] : tensor<2x4x5xf32>, tensor<2x5x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[DK:.+]] = tf.matmul %[[DS]], %[[Q]] transpose_lhs : tensor<2x4x5xf32>, tensor<2x4x8xf32> -> tensor<2x5x8xf32>
// CHECK-NOT: tf.attention_grad
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
// ONLY-LABEL: func.func @attention_grad
// ONLY: tf.attention_grad
func.func @attention_grad(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x3xf32>, %m: tensor<2x4x5xi1>, %g: tensor<2x4x3xf32>) -> (tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>) {
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v mask %m grad %g scale 0.353553385 : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>, tensor<2x4x3xf32>, tensor<2x4x5xi1> -> tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>
  return %dq, %dk, %dv : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>
}

// -----

// Mean and biased variance over the last dim, rsqrt(var + epsilon) (the
// default 1e-5), then the affine part with gamma and beta broadcast.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<8x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-NOT: tf.layer_norm
// CHECK: %[[MEAN:.+]] = tf.reduce_mean %[[X]] [1] : tensor<8x16xf32> -> tensor<8xf32>
// CHECK: %[[MEANB:.+]] = tf.broadcast_in_dim %[[MEAN]] [0] : tensor<8xf32> to tensor<8x16xf32>
// CHECK: %[[C:.+]] = tf.sub %[[X]], %[[MEANB]]
// CHECK: %[[C2:.+]] = tf.mul %[[C]], %[[C]]
// CHECK: %[[VAR:.+]] = tf.reduce_mean %[[C2]] [1] : tensor<8x16xf32> -> tensor<8xf32>
// CHECK: %[[EPS:.+]] = tf.constant dense<9.99999974E-6> : tensor<8xf32>
// CHECK: %[[VE:.+]] = tf.add %[[VAR]], %[[EPS]]
// CHECK: %[[R:.+]] = tf.rsqrt %[[VE]] : tensor<8xf32>
// CHECK: %[[RB:.+]] = tf.broadcast_in_dim %[[R]] [0] : tensor<8xf32> to tensor<8x16xf32>
// CHECK: %[[XH:.+]] = tf.mul %[[C]], %[[RB]]
// CHECK: %[[GB:.+]] = tf.broadcast_in_dim %[[G]] [1] : tensor<16xf32> to tensor<8x16xf32>
// CHECK: %[[BB:.+]] = tf.broadcast_in_dim %[[B]] [1] : tensor<16xf32> to tensor<8x16xf32>
// CHECK: %[[Y0:.+]] = tf.mul %[[XH]], %[[GB]]
// CHECK: %[[Y:.+]] = tf.add %[[Y0]], %[[BB]]
// CHECK-NOT: tf.layer_norm
// CHECK: return %[[Y]]
// ONLY-LABEL: func.func @layer_norm
// ONLY: tf.layer_norm %
func.func @layer_norm(%x: tensor<8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %y = tf.layer_norm %x, %g, %b : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// x̂ recomputed (epsilon 1e-6 here); dx = rstd (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂))
// with dx̂ = g gamma; dgamma and dbeta sum over every row dim.
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x16xf32>, %[[G:.+]]: tensor<16xf32>, %[[DY:.+]]: tensor<2x3x16xf32>)
// CHECK-NOT: tf.layer_norm_grad
// CHECK: tf.reduce_mean %[[X]] [2] : tensor<2x3x16xf32> -> tensor<2x3xf32>
// CHECK: tf.constant dense<9.99999997E-7> : tensor<2x3xf32>
// CHECK: %[[R:.+]] = tf.rsqrt
// CHECK: %[[RB:.+]] = tf.broadcast_in_dim %[[R]] [0, 1] : tensor<2x3xf32> to tensor<2x3x16xf32>
// CHECK: %[[XH:.+]] = tf.mul %{{.+}}, %[[RB]]
// CHECK: %[[GB:.+]] = tf.broadcast_in_dim %[[G]] [2] : tensor<16xf32> to tensor<2x3x16xf32>
// CHECK: %[[DXH:.+]] = tf.mul %[[DY]], %[[GB]]
// CHECK: %[[M1:.+]] = tf.reduce_mean %[[DXH]] [2]
// CHECK: %[[M1B:.+]] = tf.broadcast_in_dim %[[M1]] [0, 1]
// CHECK: %[[P:.+]] = tf.mul %[[DXH]], %[[XH]]
// CHECK: %[[M2:.+]] = tf.reduce_mean %[[P]] [2]
// CHECK: %[[M2B:.+]] = tf.broadcast_in_dim %[[M2]] [0, 1]
// CHECK: %[[T:.+]] = tf.mul %[[XH]], %[[M2B]]
// CHECK: %[[D1:.+]] = tf.sub %[[DXH]], %[[M1B]]
// CHECK: %[[D2:.+]] = tf.sub %[[D1]], %[[T]]
// CHECK: %[[DX:.+]] = tf.mul %[[RB]], %[[D2]]
// CHECK: %[[GX:.+]] = tf.mul %[[DY]], %[[XH]]
// CHECK: %[[DG:.+]] = tf.reduce_sum %[[GX]] [0, 1] : tensor<2x3x16xf32> -> tensor<16xf32>
// CHECK: %[[DB:.+]] = tf.reduce_sum %[[DY]] [0, 1] : tensor<2x3x16xf32> -> tensor<16xf32>
// CHECK-NOT: tf.layer_norm_grad
// CHECK: return %[[DX]], %[[DG]], %[[DB]]
// ONLY-LABEL: func.func @layer_norm_grad
// ONLY: tf.layer_norm_grad
func.func @layer_norm_grad(%x: tensor<2x3x16xf32>, %g: tensor<16xf32>, %dy: tensor<2x3x16xf32>) -> (tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %dx, %dg, %db = tf.layer_norm_grad %x, %g grad %dy {epsilon = 1.0e-6 : f32} : tensor<2x3x16xf32>, tensor<16xf32>
  return %dx, %dg, %db : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// (softmax(logits) - one_hot(labels)) g / N, N the 6 label positions; the
// class axis last, so no transpose (cross-entropy-grad.mlir in
// tests/lit/lowering has the other axes).
// CHECK-LABEL: func.func @cross_entropy_grad
// CHECK-NOT: tf.cross_entropy_grad
// CHECK: tf.one_hot %arg1 depth 5
// CHECK: tf.softmax %arg0 axis 1 : tensor<6x5xf32>
// CHECK: tf.constant dense<6.000000e+00> : tensor<6x5xf32>
// CHECK-NOT: tf.cross_entropy_grad
// CHECK: return
// ONLY-LABEL: func.func @cross_entropy_grad
// ONLY: tf.cross_entropy_grad
func.func @cross_entropy_grad(%l: tensor<6x5xf32>, %y: tensor<6xi32>, %g: tensor<f32>) -> tensor<6x5xf32> {
  %d = tf.cross_entropy_grad %l, %y grad %g axis 1 : tensor<6x5xf32>, tensor<6xi32>, tensor<f32>
  return %d : tensor<6x5xf32>
}

// -----

// ops=attention: the attention goes, the layer_norm beside it stays whole.
// CHECK-LABEL: func.func @block
// CHECK-NOT: tf.attention
// CHECK-NOT: tf.layer_norm
// CHECK: return
// ONLY-LABEL: func.func @block
// ONLY-NOT: tf.attention
// ONLY: tf.softmax
// ONLY: %[[Y:.+]] = tf.layer_norm %{{.+}}, %arg3, %arg4 : tensor<4x8xf32>, tensor<8xf32>
// ONLY-NOT: tf.attention
// ONLY: return %[[Y]]
func.func @block(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %o = tf.attention %q, %k, %v scale 0.353553385 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = tf.layer_norm %o, %g, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %y : tensor<4x8xf32>
}
