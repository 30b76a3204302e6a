// RUN: tfc-dsl-examples --model linear_rank3 | FileCheck %s
// RUN: tfc-dsl-examples --model linear_rank2 | FileCheck %s --check-prefix=RANK2

// linear: x @ W^T + b over the last dim, leading dims folded into the GEMM's M,
// PyTorch's init: uniform(+-1/sqrt(in)) = 0.3535... for in = 8.
// CHECK-LABEL: func.func @linear_rank3
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x5x8xf32> {tf.input = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x8xf32> {tf.init = #tf.init<uniform, 0.35355339059327373>, tf.param = "linear.weight"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<4xf32> {tf.init = #tf.init<uniform, 0.35355339059327373>, tf.param = "linear.bias"}
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<3x8xf32> {tf.init = #tf.init<uniform, 0.35355339059327373>, tf.param = "proj.weight"}
// CHECK-NOT: proj.bias
// CHECK: %[[FLAT:.+]] = tf.reshape %[[X]] : tensor<2x5x8xf32> to tensor<10x8xf32>
// CHECK: %[[MM:.+]] = tf.matmul %[[FLAT]], %[[W]] transpose_rhs : tensor<10x8xf32>, tensor<4x8xf32> -> tensor<10x4xf32>
// CHECK: %[[BB:.+]] = tf.broadcast_in_dim %[[B]] [1] : tensor<4xf32> to tensor<10x4xf32>
// CHECK: %[[ADD:.+]] = tf.add %[[MM]], %[[BB]] : tensor<10x4xf32>
// CHECK: %[[Y:.+]] = tf.reshape %[[ADD]] : tensor<10x4xf32> to tensor<2x5x4xf32>
// CHECK: %[[MM2:.+]] = tf.matmul %{{.+}}, %[[P]] transpose_rhs : tensor<10x8xf32>, tensor<3x8xf32> -> tensor<10x3xf32>
// CHECK-NEXT: %[[Z:.+]] = tf.reshape %[[MM2]] : tensor<10x3xf32> to tensor<2x5x3xf32>
// CHECK: return %[[Y]], %[[Z]]

// RANK2-LABEL: func.func @linear_rank2
// RANK2-NOT: tf.reshape
// RANK2: tf.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x4xf32>
// RANK2-NOT: tf.reshape
