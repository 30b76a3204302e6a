// RUN: tfc-dsl-examples --model conv1d | FileCheck %s

// NCW, weight [out, in, kernel], PyTorch's init bound 1/sqrt(in * kernel).
// CHECK-LABEL: func.func @conv1d
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x20xf32>
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x3x5xf32> {tf.init = #tf.init<uniform, 0.2581988897471611>, tf.param = "conv1d.weight"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<4xf32> {tf.init = #tf.init<uniform, 0.2581988897471611>, tf.param = "conv1d.bias"}
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<6x3x1xf32> {{.*}}tf.param = "pointwise.weight"}
// CHECK: tf.conv1d %[[X]], %[[W]], %[[B]] padding 2 : tensor<2x3x20xf32>, tensor<4x3x5xf32>, tensor<4xf32> -> tensor<2x4x20xf32>
// CHECK: tf.conv1d %[[X]], %[[P]] padding 0 : tensor<2x3x20xf32>, tensor<6x3x1xf32> -> tensor<2x6x20xf32>
