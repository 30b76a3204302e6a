// RUN: tfc-dsl-examples --model functions | FileCheck %s
// RUN: not tfc-dsl-examples --model bad_heads 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: not tfc-dsl-examples --model bad_broadcast 2>&1 | FileCheck %s --check-prefix=BROADCAST

// numpy broadcasting inserts explicit broadcasts; a scalar becomes a
// broadcast constant; mean of a bool tensor counts its trues.
// CHECK-LABEL: func.func @functions
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>
// CHECK-SAME: %[[Y:[a-z0-9]+]]: tensor<3xf32>
// CHECK-SAME: %[[L:[a-z0-9]+]]: tensor<2xi32>
// CHECK-SAME: -> (tensor<2x3xf32> {tf.output = "sum"}, tensor<2x3xf32> {tf.output = "scaled"}, tensor<f32> {tf.metric = "accuracy"}, tensor<2x3xi1> {tf.output = "less"})
// CHECK: %[[YB:.+]] = tf.broadcast_in_dim %[[Y]] [1] : tensor<3xf32> to tensor<2x3xf32>
// CHECK: %[[SUM:.+]] = tf.add %[[X]], %[[YB]] : tensor<2x3xf32>
// CHECK: %[[TWO:.+]] = tf.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[TWOB:.+]] = tf.broadcast_in_dim %[[TWO]] [] : tensor<f32> to tensor<2x3xf32>
// CHECK: %[[SCALED:.+]] = tf.mul %[[TWOB]], %[[X]] : tensor<2x3xf32>
// CHECK: %[[AM:.+]] = tf.argmax %[[X]] axis 1 : tensor<2x3xf32> -> tensor<2xi32>
// CHECK: %[[EQ:.+]] = tf.compare eq, %[[AM]], %[[L]] : tensor<2xi32>
// CHECK: %[[F:.+]] = tf.cast %[[EQ]] : tensor<2xi1> to tensor<2xf32>
// CHECK: %[[ACC:.+]] = tf.reduce_mean %[[F]] [0] : tensor<2xf32> -> tensor<f32>
// CHECK: %[[LT:.+]] = tf.compare lt, %[[X]], %{{.+}} : tensor<2x3xf32>
// CHECK: return %[[SUM]], %[[SCALED]], %[[ACC]], %[[LT]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<2x3xi1>

// HEADS: error: multi_head_attention: 4 heads do not divide the model dimension 6
// A C++ model's error is at the line of the call, under the model's name,
// and spells the operator as C++ does.
// BROADCAST: composites.cpp: In model 'bad_broadcast':
// BROADCAST-NEXT: composites.cpp:{{[0-9]+}}: error: operator+: shapes [2, 3] and [4] cannot be broadcast together
