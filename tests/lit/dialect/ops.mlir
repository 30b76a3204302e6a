// RUN: tf-opt %s --split-input-file | tf-opt --split-input-file | FileCheck %s
// RUN: tf-opt %s --split-input-file --mlir-print-op-generic | tf-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<2xf32>, tensor<i32>, tensor<2x2xi1>) {
  // CHECK: tf.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = tf.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: tf.constant dense<7> : tensor<i32>
  %1 = tf.constant dense<7> : tensor<i32>
  // CHECK: tf.constant dense<{{\[\[}}true, false], [true, true]]> : tensor<2x2xi1>
  %2 = tf.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  return %0, %1, %2 : tensor<2xf32>, tensor<i32>, tensor<2x2xi1>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
func.func @unary(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[A:.+]] = tf.neg %[[X]] : tensor<2x3xf32>
  // CHECK: %[[B:.+]] = tf.exp %[[A]] : tensor<2x3xf32>
  // CHECK: %[[C:.+]] = tf.log %[[B]] : tensor<2x3xf32>
  // CHECK: %[[D:.+]] = tf.sqrt %[[C]] : tensor<2x3xf32>
  // CHECK: %[[E:.+]] = tf.rsqrt %[[D]] : tensor<2x3xf32>
  // CHECK: %[[F:.+]] = tf.tanh %[[E]] : tensor<2x3xf32>
  // CHECK: %[[G:.+]] = tf.relu %[[F]] : tensor<2x3xf32>
  // CHECK: tf.gelu %[[G]] : tensor<2x3xf32>
  %0 = tf.neg %x : tensor<2x3xf32>
  %1 = tf.exp %0 : tensor<2x3xf32>
  %2 = tf.log %1 : tensor<2x3xf32>
  %3 = tf.sqrt %2 : tensor<2x3xf32>
  %4 = tf.rsqrt %3 : tensor<2x3xf32>
  %5 = tf.tanh %4 : tensor<2x3xf32>
  %6 = tf.relu %5 : tensor<2x3xf32>
  %7 = tf.gelu %6 : tensor<2x3xf32>
  return %7 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @trig
// CHECK-SAME: (%[[X:.+]]: tensor<2xf32>)
func.func @trig(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: %[[S:.+]] = tf.sin %[[X]] : tensor<2xf32>
  // CHECK: tf.cos %[[S]] : tensor<2xf32>
  %0 = tf.sin %x : tensor<2xf32>
  %1 = tf.cos %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @erf
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
func.func @erf(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: tf.erf %[[X]] : tensor<2x3xf32>
  %0 = tf.erf %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>)
func.func @binary(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[S0:.+]] = tf.add %[[A]], %[[B]] : tensor<4xf32>
  // CHECK: %[[S1:.+]] = tf.sub %[[S0]], %[[B]] : tensor<4xf32>
  // CHECK: %[[S2:.+]] = tf.mul %[[S1]], %[[B]] : tensor<4xf32>
  // CHECK: %[[S3:.+]] = tf.div %[[S2]], %[[B]] : tensor<4xf32>
  // CHECK: %[[S4:.+]] = tf.max %[[S3]], %[[B]] : tensor<4xf32>
  // CHECK: tf.min %[[S4]], %[[B]] : tensor<4xf32>
  %0 = tf.add %a, %b : tensor<4xf32>
  %1 = tf.sub %0, %b : tensor<4xf32>
  %2 = tf.mul %1, %b : tensor<4xf32>
  %3 = tf.div %2, %b : tensor<4xf32>
  %4 = tf.max %3, %b : tensor<4xf32>
  %5 = tf.min %4, %b : tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @compare_logical_select_cast
func.func @compare_logical_select_cast(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  // CHECK: %[[EQ:.+]] = tf.compare eq, %{{.+}}, %{{.+}} : tensor<4xf32>
  // CHECK: %[[NE:.+]] = tf.compare ne, %{{.+}}, %{{.+}} : tensor<4xi32>
  // CHECK: tf.compare lt, %{{.+}} : tensor<4xf32>
  // CHECK: tf.compare le, %{{.+}} : tensor<4xf32>
  // CHECK: tf.compare gt, %{{.+}} : tensor<4xf32>
  // CHECK: %[[GE:.+]] = tf.compare ge, %{{.+}} : tensor<4xf32>
  // CHECK: %[[BEQ:.+]] = tf.compare eq, %[[EQ]], %[[NE]] : tensor<4xi1>
  // CHECK: %[[AND:.+]] = tf.and %[[BEQ]], %[[GE]] : tensor<4xi1>
  // CHECK: %[[OR:.+]] = tf.or %[[AND]], %[[EQ]] : tensor<4xi1>
  // CHECK: %[[NOT:.+]] = tf.not %[[OR]] : tensor<4xi1>
  // CHECK: tf.select %[[NOT]], %{{.+}}, %{{.+}} : tensor<4xi1>, tensor<4xf32>
  // CHECK: tf.cast %{{.+}} : tensor<4xf32> to tensor<4xi32>
  %eq = tf.compare eq, %a, %b : tensor<4xf32>
  %ne = tf.compare ne, %i, %i : tensor<4xi32>
  %lt = tf.compare lt, %a, %b : tensor<4xf32>
  %le = tf.compare le, %a, %b : tensor<4xf32>
  %gt = tf.compare gt, %a, %b : tensor<4xf32>
  %ge = tf.compare ge, %a, %b : tensor<4xf32>
  %beq = tf.compare eq, %eq, %ne : tensor<4xi1>
  %and = tf.and %beq, %ge : tensor<4xi1>
  %or = tf.or %and, %eq : tensor<4xi1>
  %not = tf.not %or : tensor<4xi1>
  %s = tf.select %not, %a, %b : tensor<4xi1>, tensor<4xf32>
  %c = tf.cast %s : tensor<4xf32> to tensor<4xi32>
  return %s, %c : tensor<4xf32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @shape_ops
func.func @shape_ops(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<6xf32>, tensor<2x1xf32>, tensor<2x6xf32>) {
  // CHECK: tf.broadcast_in_dim %{{.+}} [1] : tensor<3xf32> to tensor<2x3xf32>
  // CHECK: tf.transpose %{{.+}} [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK: tf.reshape %{{.+}} : tensor<2x3xf32> to tensor<6xf32>
  // CHECK: tf.slice %{{.+}} start [0, 1] limit [2, 3] stride [1, 2] : tensor<2x3xf32> -> tensor<2x1xf32>
  // CHECK: tf.concat %{{.+}}, %{{.+}} axis 1 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  %0 = tf.broadcast_in_dim %b [1] : tensor<3xf32> to tensor<2x3xf32>
  %1 = tf.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %2 = tf.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  %3 = tf.slice %x start [0, 1] limit [2, 3] stride [1, 2] : tensor<2x3xf32> -> tensor<2x1xf32>
  %4 = tf.concat %x, %0 axis 1 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<3x2xf32>, tensor<6xf32>, tensor<2x1xf32>, tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<f32>, tensor<2x3xi32>) {
  // CHECK: tf.reduce_sum %{{.+}} [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  // CHECK: tf.reduce_max %{{.+}} [0, 1] : tensor<2x3x4xf32> -> tensor<4xf32>
  // CHECK: tf.reduce_mean %{{.+}} [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  // CHECK: tf.argmax %{{.+}} axis 2 : tensor<2x3x4xf32> -> tensor<2x3xi32>
  %0 = tf.reduce_sum %x [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %1 = tf.reduce_max %x [0, 1] : tensor<2x3x4xf32> -> tensor<4xf32>
  %2 = tf.reduce_mean %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %3 = tf.argmax %x axis 2 : tensor<2x3x4xf32> -> tensor<2x3xi32>
  return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<4xf32>, tensor<f32>, tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>, %c: tensor<5x4x3xf32>, %d: tensor<5x3x2xf32>) -> (tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x2xf32>, tensor<5x2x4xf32>) {
  // CHECK: tf.matmul %{{.+}}, %{{.+}} : tensor<5x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  // CHECK: tf.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<5x2x3xf32>, tensor<5x4x3xf32> -> tensor<5x2x4xf32>
  // CHECK: tf.matmul %{{.+}}, %{{.+}} transpose_lhs : tensor<5x3x2xf32>, tensor<5x3x2xf32> -> tensor<5x2x2xf32>
  // CHECK: tf.matmul %{{.+}}, %{{.+}} transpose_lhs transpose_rhs : tensor<5x3x2xf32>, tensor<5x4x3xf32> -> tensor<5x2x4xf32>
  %0 = tf.matmul %a, %b : tensor<5x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  %1 = tf.matmul %a, %c transpose_rhs : tensor<5x2x3xf32>, tensor<5x4x3xf32> -> tensor<5x2x4xf32>
  %2 = tf.matmul %d, %d transpose_lhs : tensor<5x3x2xf32>, tensor<5x3x2xf32> -> tensor<5x2x2xf32>
  %3 = tf.matmul %d, %c transpose_lhs transpose_rhs : tensor<5x3x2xf32>, tensor<5x4x3xf32> -> tensor<5x2x4xf32>
  return %0, %1, %2, %3 : tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x2xf32>, tensor<5x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @nn_ops
func.func @nn_ops(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %seed: tensor<i32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: tf.softmax %{{.+}} axis 1 : tensor<2x8xf32>
  // CHECK: tf.log_softmax %{{.+}} axis 0 : tensor<2x8xf32>
  // CHECK: tf.layer_norm %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x8xf32>, tensor<8xf32>
  // CHECK: tf.layer_norm %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 9.99999997E-7 : f32} : tensor<2x8xf32>, tensor<8xf32>
  // CHECK: tf.dropout %{{.+}}, %{{.+}} rate 1.000000e-01 key 3 training : tensor<2x8xf32>
  // CHECK: tf.dropout %{{.+}}, %{{.+}} rate 5.000000e-01 key 4 : tensor<2x8xf32>
  %0 = tf.softmax %x axis 1 : tensor<2x8xf32>
  %1 = tf.log_softmax %x axis 0 : tensor<2x8xf32>
  %2 = tf.layer_norm %x, %g, %g : tensor<2x8xf32>, tensor<8xf32>
  %3 = tf.layer_norm %x, %g, %g {epsilon = 1.0e-6 : f32} : tensor<2x8xf32>, tensor<8xf32>
  %4 = tf.dropout %x, %seed rate 0.1 key 3 training : tensor<2x8xf32>
  %5 = tf.dropout %x, %seed rate 0.5 key 4 : tensor<2x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A dropout on a rank's share of a batch counts its elements from
// sample_offset * sample_size.
// CHECK-LABEL: func.func @dropout_sample_offset
// CHECK: tf.dropout %{{.+}}, %{{.+}} sample_offset %{{.+}} sample_size 8 rate 1.000000e-01 key 3 training : tensor<2x8xf32>
func.func @dropout_sample_offset(%x: tensor<2x8xf32>, %seed: tensor<i32>, %offset: tensor<i32>) -> tensor<2x8xf32> {
  %0 = tf.dropout %x, %seed sample_offset %offset sample_size 8 rate 0.1 key 3 training : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x3x8xf32>, %[[K:.+]]: tensor<2x4x5x8xf32>, %[[V:.+]]: tensor<2x4x5x6xf32>, %[[M:.+]]: tensor<2x4x3x5xi1>)
func.func @attention(%q: tensor<2x4x3x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x6xf32>, %m: tensor<2x4x3x5xi1>) -> (tensor<2x4x3x6xf32>, tensor<2x4x3x6xf32>, tensor<2x4x3x5xf32>) {
  // CHECK: tf.attention %[[Q]], %[[K]], %[[V]] scale 0.353553385 : tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32> -> tensor<2x4x3x6xf32>
  // CHECK: %{{.+}}, %{{.+}} = tf.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] scale 0.353553385 with_weights : tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>, tensor<2x4x3x5xi1> -> tensor<2x4x3x6xf32>, tensor<2x4x3x5xf32>
  %0 = tf.attention %q, %k, %v scale 0.353553385 : tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32> -> tensor<2x4x3x6xf32>
  %1:2 = tf.attention %q, %k, %v mask %m scale 0.353553385 with_weights : tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>, tensor<2x4x3x5xi1> -> tensor<2x4x3x6xf32>, tensor<2x4x3x5xf32>
  return %0, %1#0, %1#1 : tensor<2x4x3x6xf32>, tensor<2x4x3x6xf32>, tensor<2x4x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @conv_embedding_losses
func.func @conv_embedding_losses(%x: tensor<4x1x100xf32>, %w: tensor<64x1x5xf32>, %b: tensor<64xf32>, %ids: tensor<4x16xi32>, %table: tensor<10x32xf32>, %logits: tensor<4x16x10xf32>) -> (tensor<4x64x100xf32>, tensor<4x64x96xf32>, tensor<4x16x10xf32>, tensor<4x16x32xf32>, tensor<f32>, tensor<f32>) {
  // CHECK: tf.conv1d %{{.+}}, %{{.+}}, %{{.+}} padding 2 : tensor<4x1x100xf32>, tensor<64x1x5xf32>, tensor<64xf32> -> tensor<4x64x100xf32>
  // CHECK: tf.conv1d %{{.+}}, %{{.+}} padding 0 : tensor<4x1x100xf32>, tensor<64x1x5xf32> -> tensor<4x64x96xf32>
  // CHECK: tf.one_hot %{{.+}} depth 10 : tensor<4x16xi32> -> tensor<4x16x10xf32>
  // CHECK: tf.gather %{{.+}}, %{{.+}} : tensor<10x32xf32>, tensor<4x16xi32> -> tensor<4x16x32xf32>
  // CHECK: tf.gather %{{.+}}, %{{.+}} columns : tensor<32x10xf32>, tensor<4x16xi32> -> tensor<4x16x32xf32>
  // CHECK: tf.cross_entropy %{{.+}}, %{{.+}} axis 2 : tensor<4x16x10xf32>, tensor<4x16xi32>
  // CHECK: tf.mse %{{.+}}, %{{.+}} : tensor<4x16x10xf32>
  %0 = tf.conv1d %x, %w, %b padding 2 : tensor<4x1x100xf32>, tensor<64x1x5xf32>, tensor<64xf32> -> tensor<4x64x100xf32>
  %1 = tf.conv1d %x, %w padding 0 : tensor<4x1x100xf32>, tensor<64x1x5xf32> -> tensor<4x64x96xf32>
  %2 = tf.one_hot %ids depth 10 : tensor<4x16xi32> -> tensor<4x16x10xf32>
  %3 = tf.gather %table, %ids : tensor<10x32xf32>, tensor<4x16xi32> -> tensor<4x16x32xf32>
  %weight = tf.transpose %table [1, 0] : tensor<10x32xf32> -> tensor<32x10xf32>
  %looked = tf.gather %weight, %ids columns : tensor<32x10xf32>, tensor<4x16xi32> -> tensor<4x16x32xf32>
  %4 = tf.cross_entropy %logits, %ids axis 2 : tensor<4x16x10xf32>, tensor<4x16xi32>
  %5 = tf.mse %logits, %2 : tensor<4x16x10xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x64x100xf32>, tensor<4x64x96xf32>, tensor<4x16x10xf32>, tensor<4x16x32xf32>, tensor<f32>, tensor<f32>
}

// -----

// The cross-entropy's adjoint of the logits (what its VJP emits), the class
// axis last and not last: the result has the logits' type.
// CHECK-LABEL: func.func @cross_entropy_grad
func.func @cross_entropy_grad(%logits: tensor<4x16x10xf32>, %ids: tensor<4x16xi32>, %g: tensor<f32>, %l1: tensor<4x10x16xf32>) -> (tensor<4x16x10xf32>, tensor<4x10x16xf32>) {
  // CHECK: %[[D0:.+]] = tf.cross_entropy_grad %{{.+}}, %{{.+}} grad %{{.+}} axis 2 : tensor<4x16x10xf32>, tensor<4x16xi32>, tensor<f32>
  // CHECK: %[[D1:.+]] = tf.cross_entropy_grad %{{.+}}, %{{.+}} grad %{{.+}} axis 1 : tensor<4x10x16xf32>, tensor<4x16xi32>, tensor<f32>
  // CHECK: return %[[D0]], %[[D1]] : tensor<4x16x10xf32>, tensor<4x10x16xf32>
  %0 = tf.cross_entropy_grad %logits, %ids grad %g axis 2 : tensor<4x16x10xf32>, tensor<4x16xi32>, tensor<f32>
  %1 = tf.cross_entropy_grad %l1, %ids grad %g axis 1 : tensor<4x10x16xf32>, tensor<4x16xi32>, tensor<f32>
  return %0, %1 : tensor<4x16x10xf32>, tensor<4x10x16xf32>
}

// -----

// CHECK-LABEL: func.func @model_signature
// CHECK-SAME: tensor<2x16xi32> {tf.input = "tokens"}
// CHECK-SAME: tensor<32x10xf32> {tf.init = #tf.init<uniform, 3.160000e-01>, tf.param = "input_net.weight"}
// CHECK-SAME: tensor<32xf32> {tf.init = #tf.init<zeros>, tf.param = "b0"}
// CHECK-SAME: tensor<32xf32> {tf.init = #tf.init<ones>, tf.param = "g0"}
// CHECK-SAME: tensor<10x32xf32> {tf.init = #tf.init<normal, 1.000000e+00>, tf.param = "embedding.weight"}
// CHECK-SAME: tensor<i32> {tf.seed}
// CHECK-SAME: -> (tensor<f32> {tf.loss}, tensor<f32> {tf.metric = "accuracy"}, tensor<2x16xi32> {tf.output = "tokens"}, tensor<1x1xf32> {tf.attention = "encoder.0.self_attn"})
func.func @model_signature(%t: tensor<2x16xi32> {tf.input = "tokens"},
    %w: tensor<32x10xf32> {tf.param = "input_net.weight", tf.init = #tf.init<uniform, 0.316>},
    %b: tensor<32xf32> {tf.param = "b0", tf.init = #tf.init<zeros>},
    %g: tensor<32xf32> {tf.param = "g0", tf.init = #tf.init<ones>},
    %e: tensor<10x32xf32> {tf.param = "embedding.weight", tf.init = #tf.init<normal, 1.0>},
    %s: tensor<i32> {tf.seed})
    -> (tensor<f32> {tf.loss}, tensor<f32> {tf.metric = "accuracy"}, tensor<2x16xi32> {tf.output = "tokens"}, tensor<1x1xf32> {tf.attention = "encoder.0.self_attn"}) {
  %0 = tf.constant dense<0.0> : tensor<f32>
  %1 = tf.constant dense<0.0> : tensor<1x1xf32>
  return %0, %0, %t, %1 : tensor<f32>, tensor<f32>, tensor<2x16xi32>, tensor<1x1xf32>
}

// -----

// CHECK-LABEL: func.func @fusion
// CHECK: %[[R:.+]]:2 = tf.fusion "loop" : tensor<4xf32>, tensor<4xf32> {
// CHECK:   %[[S:.+]] = tf.add
// CHECK:   %[[Y:.+]] = tf.relu %[[S]]
// CHECK:   tf.yield %[[S]], %[[Y]] : tensor<4xf32>, tensor<4xf32>
// CHECK: }
// CHECK: tf.fusion "reduction" : tensor<f32>
func.func @fusion(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>) {
  %r:2 = tf.fusion "loop" : tensor<4xf32>, tensor<4xf32> {
    %s = tf.add %a, %b : tensor<4xf32>
    %y = tf.relu %s : tensor<4xf32>
    tf.yield %s, %y : tensor<4xf32>, tensor<4xf32>
  }
  %n = tf.fusion "reduction" : tensor<f32> {
    %sq = tf.mul %r#1, %r#1 : tensor<4xf32>
    %t = tf.reduce_sum %sq [0] : tensor<4xf32> -> tensor<f32>
    tf.yield %t : tensor<f32>
  }
  return %r#0, %r#1, %n : tensor<4xf32>, tensor<4xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @attention_grad
func.func @attention_grad(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x3xf32>, %m: tensor<2x4x5xi1>, %g: tensor<2x4x3xf32>) -> (tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>) {
  // CHECK: tf.attention_grad %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} grad %{{.+}} scale 5.000000e-01 : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>, tensor<2x4x3xf32>, tensor<2x4x5xi1> -> tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v mask %m grad %g scale 0.5 : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>, tensor<2x4x3xf32>, tensor<2x4x5xi1> -> tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>
  return %dq, %dk, %dv : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_grad
func.func @layer_norm_grad(%x: tensor<2x4x8xf32>, %gamma: tensor<8xf32>, %g: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // CHECK: %dx, %dgamma, %dbeta = tf.layer_norm_grad %{{.+}}, %{{.+}} grad %{{.+}} : tensor<2x4x8xf32>, tensor<8xf32>
  %dx, %dgamma, %dbeta = tf.layer_norm_grad %x, %gamma grad %g {epsilon = 1.0e-5 : f32} : tensor<2x4x8xf32>, tensor<8xf32>
  // CHECK: tf.layer_norm_grad %{{.+}}, %{{.+}} grad %{{.+}} {epsilon = 1.000000e-03 : f32}
  %0:3 = tf.layer_norm_grad %x, %gamma grad %g {epsilon = 1.0e-3 : f32} : tensor<2x4x8xf32>, tensor<8xf32>
  return %dx, %dgamma, %dbeta : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
}
