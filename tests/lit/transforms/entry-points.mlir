// RUN: tf-opt %s --tf-entry-points --split-input-file --verify-diagnostics | FileCheck %s
// RUN: tf-opt %s --tf-entry-points --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=MODULE

// predict keeps the outputs, drops the loss and metrics, and reads only
// what they need: no labels. The model is described on the module.
// MODULE: module attributes
// MODULE-SAME: tfc.batch = 2 : i64
// MODULE-SAME: tfc.inputs = [{name = "x", type = tensor<2x3xf32>}, {index_bound = 4 : i64, name = "labels", type = tensor<2xi32>}]
// MODULE-SAME: tfc.model = "m"
// MODULE-SAME: tfc.params = [{init = #tf.init<uniform, 5.000000e-01>, name = "w", type = tensor<4x3xf32>}]
// MODULE-NOT: func.func @m(
// CHECK-LABEL: func.func @predict(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>, %[[W:[a-z0-9]+]]: tensor<4x3xf32>) -> tensor<2x4xf32>
// CHECK-SAME: tfc.abi = {args = [{kind = "input", name = "x"}, {kind = "param", name = "w"}], results = [{kind = "output", name = "y"}]}
// CHECK-SAME: tfc.entry = "predict"
// CHECK-NOT: tf.cross_entropy
// CHECK: %[[Y:[a-z0-9]+]] = tf.matmul %[[X]], %[[W]] transpose_rhs
// CHECK: return %[[Y]]
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"}, %labels: tensor<2xi32> {tf.input = "labels"},
             %w: tensor<4x3xf32> {tf.param = "w", tf.init = #tf.init<uniform, 0.5>})
    -> (tensor<f32> {tf.loss}, tensor<2x4xf32> {tf.output = "y"}) attributes {tf.batch = 2 : i64} {
  %y = tf.matmul %x, %w transpose_rhs : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %l = tf.cross_entropy %y, %labels axis 1 : tensor<2x4xf32>, tensor<2xi32>
  return %l, %y : tensor<f32>, tensor<2x4xf32>
}

// -----

// predict is eval mode: dropout is the identity and neither the seed nor the
// sample offset is read.
// CHECK-LABEL: func.func @predict(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-SAME: tfc.abi = {args = [{kind = "input", name = "x"}], results = [{kind = "output", name = "y"}]}
// CHECK-NOT: tf.dropout
// CHECK: return %[[X]]
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"}, %seed: tensor<i32> {tf.seed},
             %offset: tensor<i32> {tf.sample_offset})
    -> (tensor<2x3xf32> {tf.output = "y"}) attributes {tf.batch = 2 : i64} {
  %y = tf.dropout %x, %seed sample_offset %offset sample_size 3 rate 5.000000e-01 key 1 training : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Attention maps are predict results too, by their names.
// CHECK-LABEL: func.func @predict(
// CHECK-SAME: results = [{kind = "output", name = "y"}, {kind = "attention", name = "layer0"}]
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"})
    -> (tensor<2x3xf32> {tf.output = "y"}, tensor<2x3xf32> {tf.attention = "layer0"}) attributes {tf.batch = 2 : i64} {
  %y = tf.exp %x : tensor<2x3xf32>
  return %y, %x : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Functions that are not models (no tf.batch) are left alone.
// CHECK-LABEL: func.func @helper
// CHECK-NOT: func.func @predict
func.func @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// evaluate: the loss and metrics in eval mode, each a mean over the samples
// the last argument (sample_mask) selects: padded samples do not count.
// cross_entropy becomes per-position negative log-likelihoods; a mean over
// every axis becomes a masked sum over the mask's count times the elements
// per sample.
// CHECK-LABEL: func.func @predict(
// CHECK-LABEL: func.func @evaluate(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>, %[[L:[a-z0-9]+]]: tensor<2xi32>, %[[W:[a-z0-9]+]]: tensor<4x3xf32>, %[[MASK:[a-z0-9]+]]: tensor<2xf32>) -> (tensor<f32>, tensor<f32>)
// CHECK-SAME: tfc.abi = {args = [{kind = "input", name = "x"}, {kind = "input", name = "labels"}, {kind = "param", name = "w"}, {kind = "mask", name = "sample_mask"}], results = [{kind = "loss", name = "loss"}, {kind = "metric", name = "hit"}]}
// CHECK-SAME: tfc.entry = "evaluate"
// CHECK-NOT: tf.dropout
// CHECK-NOT: tf.cross_entropy
// CHECK: %[[Y:[a-z0-9]+]] = tf.matmul %[[X]], %[[W]] transpose_rhs
// CHECK: %[[LP:[a-z0-9]+]] = tf.log_softmax %[[Y]] axis 1
// CHECK: %[[HOT:[a-z0-9]+]] = tf.one_hot %[[L]] depth 4
// CHECK: %[[PICK:[a-z0-9]+]] = tf.mul %[[LP]], %[[HOT]]
// CHECK: %[[SUM:[a-z0-9]+]] = tf.reduce_sum %[[PICK]] [1]
// CHECK: %[[NLL:[a-z0-9]+]] = tf.neg %[[SUM]]
// CHECK: %[[WTS:[a-z0-9]+]] = tf.broadcast_in_dim %[[MASK]] [0] : tensor<2xf32> to tensor<2xf32>
// CHECK: %[[MASKED:[a-z0-9]+]] = tf.mul %[[NLL]], %[[WTS]]
// CHECK: %[[TOTAL:[a-z0-9]+]] = tf.reduce_sum %[[MASKED]] [0]
// CHECK: %[[COUNT:[a-z0-9]+]] = tf.reduce_sum %[[MASK]] [0]
// CHECK: %[[PER:[a-z0-9]+]] = tf.constant dense<1.000000e+00>
// CHECK: %[[DEN:[a-z0-9]+]] = tf.mul %[[COUNT]], %[[PER]]
// CHECK: %[[LOSS:[a-z0-9]+]] = tf.div %[[TOTAL]], %[[DEN]]
// CHECK: tf.broadcast_in_dim %[[MASK]] [0] : tensor<2xf32> to tensor<2x4xf32>
// CHECK: tf.constant dense<4.000000e+00>
// CHECK: %[[HIT:[a-z0-9]+]] = tf.div
// CHECK: return %[[LOSS]], %[[HIT]]
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"}, %labels: tensor<2xi32> {tf.input = "labels"},
             %w: tensor<4x3xf32> {tf.param = "w", tf.init = #tf.init<uniform, 0.5>},
             %seed: tensor<i32> {tf.seed})
    -> (tensor<f32> {tf.loss}, tensor<f32> {tf.metric = "hit"}, tensor<2x4xf32> {tf.output = "y"})
    attributes {tf.batch = 2 : i64} {
  %xd = tf.dropout %x, %seed rate 5.000000e-01 key 1 training : tensor<2x3xf32>
  %y = tf.matmul %xd, %w transpose_rhs : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %l = tf.cross_entropy %y, %labels axis 1 : tensor<2x4xf32>, tensor<2xi32>
  %e = tf.exp %y : tensor<2x4xf32>
  %hit = tf.reduce_mean %e [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l, %hit, %y : tensor<f32>, tensor<f32>, tensor<2x4xf32>
}

// -----

// A score that reduces the samples other than by a mean, sum, mse or
// cross_entropy over every axis cannot be masked: an error that names it.
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"})
    -> (tensor<f32> {tf.loss}, tensor<f32> {tf.metric = "peak"}) attributes {tf.batch = 2 : i64} {
  %l = tf.reduce_mean %x [0, 1] : tensor<2x3xf32> -> tensor<f32>
  // expected-error @+1 {{evaluate: 'peak' reduces the batch's samples in a way that cannot be restricted to the real samples of a last partial batch}}
  %p = tf.reduce_max %x [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l, %p : tensor<f32>, tensor<f32>
}

// -----

// Any scalar arithmetic of batch reductions: each reduction over the samples
// is masked (a sum: the masked sum; a mean: over the real samples), the
// arithmetic above them recomputed from the masked values, and what depends
// on parameters only (the weight penalty) kept as it is. The score here is a
// masked loss, sum(x m) / max(sum(m), 1), plus 2 mean(w^2).
// CHECK-LABEL: func.func @evaluate(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>, %[[M:[a-z0-9]+]]: tensor<2x3xf32>, %[[W:[a-z0-9]+]]: tensor<4xf32>, %[[MASK:[a-z0-9]+]]: tensor<2xf32>
// CHECK-DAG: %[[PENALTY:[a-z0-9]+]] = tf.reduce_mean %{{.*}} [0] : tensor<4xf32> -> tensor<f32>
// CHECK-DAG: %[[XM:[a-z0-9]+]] = tf.mul %[[X]], %[[M]]
// CHECK-DAG: %[[W1:[a-z0-9]+]] = tf.broadcast_in_dim %[[MASK]] [0] : tensor<2xf32> to tensor<2x3xf32>
// CHECK-DAG: %[[XMW:[a-z0-9]+]] = tf.mul %[[XM]], %[[W1]]
// CHECK-DAG: %[[NUM:[a-z0-9]+]] = tf.reduce_sum %[[XMW]] [0, 1]
// CHECK-DAG: %[[W2:[a-z0-9]+]] = tf.broadcast_in_dim %[[MASK]] [0] : tensor<2xf32> to tensor<2x3xf32>
// CHECK-DAG: %[[MW:[a-z0-9]+]] = tf.mul %[[M]], %[[W2]]
// CHECK-DAG: %[[DEN:[a-z0-9]+]] = tf.reduce_sum %[[MW]] [0, 1]
// CHECK-DAG: %[[SAFE:[a-z0-9]+]] = tf.max %[[DEN]], %{{.*}}
// CHECK-DAG: %[[RATIO:[a-z0-9]+]] = tf.div %[[NUM]], %[[SAFE]]
// CHECK: %[[SCORE:[a-z0-9]+]] = tf.add %[[RATIO]], %{{.*}}
// CHECK: return %[[SCORE]]
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"}, %m: tensor<2x3xf32> {tf.input = "m"},
             %w: tensor<4xf32> {tf.param = "w", tf.init = #tf.init<uniform, 0.5>})
    -> (tensor<f32> {tf.loss}) attributes {tf.batch = 2 : i64} {
  %xm = tf.mul %x, %m : tensor<2x3xf32>
  %num = tf.reduce_sum %xm [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %den = tf.reduce_sum %m [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %one = tf.constant dense<1.0> : tensor<f32>
  %safe = tf.max %den, %one : tensor<f32>
  %ratio = tf.div %num, %safe : tensor<f32>
  %ww = tf.mul %w, %w : tensor<4xf32>
  %pen = tf.reduce_mean %ww [0] : tensor<4xf32> -> tensor<f32>
  %two = tf.constant dense<2.0> : tensor<f32>
  %pen2 = tf.mul %two, %pen : tensor<f32>
  %score = tf.add %ratio, %pen2 : tensor<f32>
  return %score : tensor<f32>
}

// -----

// An integer input's index bound follows it through ops that only copy its
// elements (reshape, slice) to every op that indexes with it, and is the
// smallest: the embedding's 20 rows and one_hot's 12 classes give 12. An
// input only cast or compared indexes nothing and gets no bound.
// MODULE: tfc.inputs = [{index_bound = 12 : i64, name = "ids", type = tensor<2x8xi32>}, {name = "counts", type = tensor<2x8xi32>}]
// CHECK-LABEL: func.func @predict(
func.func @m(%ids: tensor<2x8xi32> {tf.input = "ids"}, %counts: tensor<2x8xi32> {tf.input = "counts"},
             %table: tensor<20x4xf32> {tf.param = "table", tf.init = #tf.init<normal, 1.0>})
    -> (tensor<2x8x4xf32> {tf.output = "e"}, tensor<4x12xf32> {tf.output = "h"},
        tensor<2x8xf32> {tf.output = "c"}) attributes {tf.batch = 2 : i64} {
  %e = tf.gather %table, %ids : tensor<20x4xf32>, tensor<2x8xi32> -> tensor<2x8x4xf32>
  %flat = tf.reshape %ids : tensor<2x8xi32> to tensor<16xi32>
  %first = tf.slice %flat start [0] limit [4] stride [1] : tensor<16xi32> -> tensor<4xi32>
  %h = tf.one_hot %first depth 12 : tensor<4xi32> -> tensor<4x12xf32>
  %c = tf.cast %counts : tensor<2x8xi32> to tensor<2x8xf32>
  return %e, %h, %c : tensor<2x8x4xf32>, tensor<4x12xf32>, tensor<2x8xf32>
}
