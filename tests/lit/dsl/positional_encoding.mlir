// RUN: tfc-dsl-examples --model positional_encoding | FileCheck %s

// PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...), d = 4:
// row 1 is (sin 1, cos 1, sin 0.01, cos 0.01), broadcast over the batch.
// CHECK-LABEL: func.func @positional_encoding
// CHECK: %[[PE:.+]] = tf.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 0.000000e+00, 1.000000e+00], [0.841470957, 0.540302277, 0.00999983306, 0.999949991], [0.909297406, -0.416146845, 0.0199986659, 9.998000e-01]]> : tensor<3x4xf32>
// CHECK: %[[B:.+]] = tf.broadcast_in_dim %[[PE]] [1, 2] : tensor<3x4xf32> to tensor<1x3x4xf32>
// CHECK: tf.add %{{.+}}, %[[B]] : tensor<1x3x4xf32>
