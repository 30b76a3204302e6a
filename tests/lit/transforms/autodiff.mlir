// RUN: tf-opt %s --tf-autodiff --split-input-file --verify-diagnostics | FileCheck %s

// A linear layer under an MSE loss, SGD with momentum and clipping: the
// forward pass, the loss's adjoint seeded with 1, each op's VJP (the bias
// gradient a reduction over the broadcast dim, the weight gradient a
// transposed matmul), the global norm, the clip factor min(1, c / (norm +
// 1e-6)), then momentum and the update. State and step are arguments and
// results; the ABI names every one.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x3xf32>, %[[Y:[a-z0-9]+]]: tensor<4x2xf32>, %[[W:[a-z0-9]+]]: tensor<2x3xf32>, %[[B:[a-z0-9]+]]: tensor<2xf32>, %[[MW:[a-z0-9]+]]: tensor<2x3xf32>, %[[MB:[a-z0-9]+]]: tensor<2xf32>, %[[STEP:[a-z0-9]+]]: tensor<f32>, %[[LR:[a-z0-9]+]]: tensor<f32>)
// CHECK-SAME: {kind = "state", name = "fc.weight.momentum_buffer"}
// CHECK-SAME: {kind = "step", name = "step"}, {kind = "hyper", name = "lr"}
// CHECK-SAME: {kind = "grad_norm", name = "grad_norm"}
// CHECK-SAME: tfc.entry = "train_step"
// CHECK: %[[MM:.+]] = tf.matmul %[[X]], %[[W]] transpose_rhs
// CHECK: %[[P:.+]] = tf.add %[[MM]], %{{.+}}
// CHECK: %[[LOSS:.+]] = tf.mse %[[P]], %[[Y]]
// CHECK: tf.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DIFF:.+]] = tf.sub %[[P]], %[[Y]]
// CHECK: %[[DP:.+]] = tf.div
// CHECK: %[[DB:.+]] = tf.reduce_sum %[[DP]] [0] : tensor<4x2xf32> -> tensor<2xf32>
// CHECK: %[[DW:.+]] = tf.matmul %[[DP]], %[[X]] transpose_lhs
// CHECK: %[[NORM:.+]] = tf.sqrt
// CHECK: %[[CLIP:.+]] = tf.min
// CHECK: %[[DWC:.+]] = tf.mul %[[DW]], %{{.+}} : tensor<2x3xf32>
// CHECK: %[[NEXTSTEP:.+]] = tf.add %[[STEP]]
// CHECK: tf.constant dense<0.899999976> : tensor<2x3xf32>
// CHECK: %[[MOM:.+]] = tf.mul %{{.+}}, %[[MW]]
// CHECK: %[[BUF:.+]] = tf.add %[[MOM]], %[[DWC]]
// CHECK: %[[NEWW:.+]] = tf.sub %[[W]], %{{.+}} : tensor<2x3xf32>
// CHECK: return %[[LOSS]], %[[NEWW]], %{{.+}}, %[[BUF]], %{{.+}}, %[[NEXTSTEP]], %{{.+}}, %[[NORM]]
// The model function stays as it was.
// CHECK-LABEL: func.func @m
// CHECK-NOT: tf.sqrt
// CHECK: return
module attributes {tf.train = {batch = 4 : i64, clip_grad_norm = 1.000000e+00 : f64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64}, name = "sgd"}}} {
  func.func @m(%arg0: tensor<4x3xf32> {tf.input = "x"}, %arg1: tensor<4x2xf32> {tf.input = "y"}, %arg2: tensor<2x3xf32> {tf.init = #tf.init<uniform, 0.5>, tf.param = "fc.weight"}, %arg3: tensor<2xf32> {tf.init = #tf.init<uniform, 0.5>, tf.param = "fc.bias"}) -> (tensor<f32> {tf.loss}, tensor<4x2xf32> {tf.output = "p"}) attributes {tf.batch = 4 : i64} {
    %0 = tf.matmul %arg0, %arg2 transpose_rhs : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
    %1 = tf.broadcast_in_dim %arg3 [1] : tensor<2xf32> to tensor<4x2xf32>
    %2 = tf.add %0, %1 : tensor<4x2xf32>
    %3 = tf.mse %2, %arg1 : tensor<4x2xf32>
    return %3, %2 : tensor<f32>, tensor<4x2xf32>
  }
}

// -----

// Adam with the UvA tutorial's cosine warm-up: two moments per parameter,
// the schedule's cosine of the step, the bias-corrected square root.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {kind = "state", name = "fc.weight.exp_avg"}, {kind = "state", name = "fc.weight.exp_avg_sq"}
// CHECK-SAME: {kind = "hyper", name = "total_steps"}
// CHECK: tf.cos
// CHECK: tf.sqrt
// CHECK-LABEL: func.func @m
module attributes {tf.train = {batch = 4 : i64, model = "m", optimizer = {args = {lr = 1.000000e-03 : f64}, name = "adam"}, schedule = {args = {warmup = 10 : i64}, name = "cosine_warmup"}}} {
  func.func @m(%arg0: tensor<4x3xf32> {tf.input = "x"}, %arg1: tensor<4x2xf32> {tf.input = "y"}, %arg2: tensor<2x3xf32> {tf.init = #tf.init<uniform, 0.5>, tf.param = "fc.weight"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 4 : i64} {
    %0 = tf.matmul %arg0, %arg2 transpose_rhs : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
    %1 = tf.mse %0, %arg1 : tensor<4x2xf32>
    return %1 : tensor<f32>
  }
}

// -----

// A model without a loss has nothing to train: no train_step.
// CHECK-LABEL: func.func @inference_only
// CHECK-NOT: train_step
module {
  func.func @inference_only(%arg0: tensor<4x3xf32> {tf.input = "x"}) -> (tensor<4x3xf32> {tf.output = "y"}) attributes {tf.batch = 4 : i64} {
    %0 = tf.relu %arg0 : tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}

// -----

// An unknown optimizer is an error naming the ones there are.
// expected-error @+1 {{train block: unknown optimizer 'lamb' (expected adam, adamw or sgd)}}
module attributes {tf.train = {batch = 4 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64}, name = "lamb"}}} {
  func.func @m(%arg0: tensor<4x3xf32> {tf.input = "x"}, %arg1: tensor<2x3xf32> {tf.init = #tf.init<zeros>, tf.param = "w"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 4 : i64} {
    %0 = tf.matmul %arg0, %arg1 transpose_rhs : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
    %1 = tf.reduce_mean %0 [0, 1] : tensor<4x2xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// Attention's adjoint is one fused tf.attention_grad (the weights are not
// recomputed in tf ops), its mask passed through.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[O:.+]] = tf.attention %[[Q:[^,]+]], %[[Q]], %[[Q]] mask %[[M:[^ ]+]] scale 5.000000e-01
// CHECK-NOT: tf.softmax
// CHECK: %dq, %dk, %dv = tf.attention_grad %[[Q]], %[[Q]], %[[Q]] mask %[[M]] grad %{{.+}} scale 5.000000e-01
// CHECK-NOT: tf.softmax
// CHECK-LABEL: func.func @m
module attributes {tf.train = {batch = 2 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64}, name = "sgd"}}} {
  func.func @m(%arg0: tensor<2x4xf32> {tf.input = "y"}, %arg1: tensor<2x4xf32> {tf.init = #tf.init<uniform, 0.5>, tf.param = "q"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 2 : i64} {
    %m = tf.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
    %0 = tf.attention %arg1, %arg1, %arg1 mask %m scale 0.5 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x2xi1> -> tensor<2x4xf32>
    %1 = tf.mse %0, %arg0 : tensor<2x4xf32>
    return %1 : tensor<f32>
  }
}

// -----

// layer_norm's adjoints are one tf.layer_norm_grad (x, gamma and the result's
// adjoint; its epsilon), whose results are dx, dgamma and dbeta.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x3xf32>, %[[Y:[a-z0-9]+]]: tensor<4x3xf32>, %[[G:[a-z0-9]+]]: tensor<3xf32>, %[[B:[a-z0-9]+]]: tensor<3xf32>
// CHECK: %[[N:.+]] = tf.layer_norm %[[X]], %[[G]], %[[B]] {epsilon = 1.000000e-03 : f32}
// CHECK: %{{.+}}, %[[DGAMMA:.+]], %{{.+}} = tf.layer_norm_grad %[[X]], %[[G]] grad %{{.+}} {epsilon = 1.000000e-03 : f32} : tensor<4x3xf32>, tensor<3xf32>
// CHECK-NOT: tf.reduce_sum
// CHECK: %[[STEP:.+]] = tf.mul %[[DGAMMA]], %{{.+}} : tensor<3xf32>
// CHECK: tf.sub %[[G]], %[[STEP]] : tensor<3xf32>
// CHECK-LABEL: func.func @m
module attributes {tf.train = {batch = 4 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64}, name = "sgd"}}} {
  func.func @m(%arg0: tensor<4x3xf32> {tf.input = "x"}, %arg1: tensor<4x3xf32> {tf.input = "y"}, %arg2: tensor<3xf32> {tf.init = #tf.init<ones>, tf.param = "norm.weight"}, %arg3: tensor<3xf32> {tf.init = #tf.init<zeros>, tf.param = "norm.bias"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 4 : i64} {
    %0 = tf.layer_norm %arg0, %arg2, %arg3 {epsilon = 1.0e-3 : f32} : tensor<4x3xf32>, tensor<3xf32>
    %1 = tf.mse %0, %arg1 : tensor<4x3xf32>
    return %1 : tensor<f32>
  }
}

// -----

// cross_entropy's adjoint of the logits is one fused tf.cross_entropy_grad
// (the logits, the labels, the loss's adjoint and the class axis; no softmax
// in tf ops), here the class axis not last; the labels have none.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x3x5xf32>, %[[Y:[a-z0-9]+]]: tensor<2x5xi32>, %[[P:[a-z0-9]+]]: tensor<2x3x5xf32>
// CHECK: %[[L:.+]] = tf.mul %[[X]], %[[P]] : tensor<2x3x5xf32>
// CHECK: %[[LOSS:.+]] = tf.cross_entropy %[[L]], %[[Y]] axis 1 : tensor<2x3x5xf32>, tensor<2x5xi32>
// CHECK: %[[ONE:.+]] = tf.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NOT: tf.softmax
// CHECK-NOT: tf.one_hot
// CHECK: %[[DL:.+]] = tf.cross_entropy_grad %[[L]], %[[Y]] grad %[[ONE]] axis 1 : tensor<2x3x5xf32>, tensor<2x5xi32>, tensor<f32>
// CHECK-NOT: tf.softmax
// CHECK: tf.mul %[[DL]], %[[X]] : tensor<2x3x5xf32>
// CHECK-LABEL: func.func @m
module attributes {tf.train = {batch = 2 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64}, name = "sgd"}}} {
  func.func @m(%arg0: tensor<2x3x5xf32> {tf.input = "x"}, %arg1: tensor<2x5xi32> {tf.input = "y"}, %arg2: tensor<2x3x5xf32> {tf.init = #tf.init<ones>, tf.param = "p"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 2 : i64} {
    %0 = tf.mul %arg0, %arg2 : tensor<2x3x5xf32>
    %1 = tf.cross_entropy %0, %arg1 axis 1 : tensor<2x3x5xf32>, tensor<2x5xi32>
    return %1 : tensor<f32>
  }
}

// -----

// tf.cross_entropy_grad is what a VJP emits; it has no gradient itself.
module attributes {tf.train = {batch = 2 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64}, name = "sgd"}}} {
  func.func @m(%arg0: tensor<2x4xf32> {tf.input = "x"}, %arg1: tensor<2xi32> {tf.input = "y"}, %arg2: tensor<2x4xf32> {tf.init = #tf.init<ones>, tf.param = "p"}, %arg3: tensor<f32> {tf.input = "g"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 2 : i64} {
    %0 = tf.mul %arg0, %arg2 : tensor<2x4xf32>
    // expected-error @+1 {{autodiff: 'tf.cross_entropy_grad' has no gradient, but the loss depends on it}}
    %1 = tf.cross_entropy_grad %0, %arg1 grad %arg3 axis 1 : tensor<2x4xf32>, tensor<2xi32>, tensor<f32>
    %2 = tf.mse %1, %arg0 : tensor<2x4xf32>
    return %2 : tensor<f32>
  }
}

// -----

// relu's adjoint masks by its output (y > 0 exactly where x > 0), so that
// x is read by nothing after the relu.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[S:.+]] = tf.mul %{{.+}}, %{{.+}} : tensor<4x3xf32>
// CHECK: %[[R:.+]] = tf.relu %[[S]] : tensor<4x3xf32>
// CHECK: %[[GT:.+]] = tf.compare gt, %[[R]], %{{.+}} : tensor<4x3xf32>
// CHECK: tf.select %[[GT]], %{{.+}}, %{{.+}} : tensor<4x3xi1>, tensor<4x3xf32>
// CHECK-NOT: tf.compare gt, %[[S]]
// CHECK-LABEL: func.func @m
module attributes {tf.train = {batch = 4 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64}, name = "sgd"}}} {
  func.func @m(%arg0: tensor<4x3xf32> {tf.input = "y"}, %arg1: tensor<4x3xf32> {tf.init = #tf.init<uniform, 0.5>, tf.param = "w"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 4 : i64} {
    %0 = tf.mul %arg1, %arg0 : tensor<4x3xf32>
    %1 = tf.relu %0 : tensor<4x3xf32>
    %2 = tf.mse %1, %arg0 : tensor<4x3xf32>
    return %2 : tensor<f32>
  }
}

// -----

// A dropout with a sample offset (a rank's share of a data-parallel batch):
// train_step and grad_step read the seed and the sample offset (the ABI's
// kind sample_offset, which the runtime feeds), and the backward applies the
// forward's mask again, from the same offset; apply_step reads neither.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%{{.+}}: tensor<2x3xf32>, %{{.+}}: tensor<3xf32>, %[[SEED:[a-z0-9]+]]: tensor<i32>, %[[OFFSET:[a-z0-9]+]]: tensor<i32>,
// CHECK-SAME: {kind = "seed", name = "seed"}, {kind = "sample_offset", name = "sample_offset"}
// CHECK: tf.dropout %{{.+}}, %[[SEED]] sample_offset %[[OFFSET]] sample_size 3 rate 5.000000e-01 key 0 training
// CHECK: tf.dropout %{{.+}}, %[[SEED]] sample_offset %[[OFFSET]] sample_size 3 rate 5.000000e-01 key 0 training
// CHECK-LABEL: func.func @grad_step
// CHECK-SAME: {kind = "seed", name = "seed"}, {kind = "sample_offset", name = "sample_offset"}
// CHECK-LABEL: func.func @apply_step
// CHECK-NOT: sample_offset
// CHECK-LABEL: func.func @m
module attributes {tf.train = {batch = 2 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64}, name = "sgd"}}} {
  func.func @m(%x: tensor<2x3xf32> {tf.input = "x"}, %w: tensor<3xf32> {tf.init = #tf.init<uniform, 0.5>, tf.param = "w"}, %seed: tensor<i32> {tf.seed}, %offset: tensor<i32> {tf.sample_offset}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 2 : i64} {
    %0 = tf.broadcast_in_dim %w [1] : tensor<3xf32> to tensor<2x3xf32>
    %1 = tf.mul %x, %0 : tensor<2x3xf32>
    %2 = tf.dropout %1, %seed sample_offset %offset sample_size 3 rate 5.000000e-01 key 0 training : tensor<2x3xf32>
    %3 = tf.reduce_mean %2 [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %3 : tensor<f32>
  }
}
