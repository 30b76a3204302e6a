// RUN: tf-opt %s --split-input-file --tf-fuse=horizontal=false | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-fuse | FileCheck %s --check-prefix=HORIZ
// RUN: tf-opt %s --split-input-file --tf-fuse="horizontal=false gemm-epilogues=false" | FileCheck %s --check-prefix=GEMMS

// An elementwise chain with a broadcast bias: one loop group; the broadcast
// moves in, the bias itself is read from above.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.+]]: tensor<8x4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[R:.+]] = tf.fusion "loop" : tensor<8x4xf32> {
// CHECK-NEXT:   %[[BB:.+]] = tf.broadcast_in_dim %[[B]] [1]
// CHECK-NEXT:   %[[S:.+]] = tf.add %[[X]], %[[BB]]
// CHECK-NEXT:   %[[Y:.+]] = tf.relu %[[S]]
// CHECK-NEXT:   tf.yield %[[Y]] : tensor<8x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @chain(%x: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %bb = tf.broadcast_in_dim %b [1] : tensor<4xf32> to tensor<8x4xf32>
  %s = tf.add %x, %bb : tensor<8x4xf32>
  %y = tf.relu %s : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A value read after the group becomes a second output of the same loop
// (Adam's new moment and new parameter).
// CHECK-LABEL: func.func @multi_output
// CHECK: %[[R:.+]]:2 = tf.fusion "loop" : tensor<16xf32>, tensor<16xf32> {
// CHECK:   %[[M:.+]] = tf.mul
// CHECK:   %[[P:.+]] = tf.sub
// CHECK:   tf.yield %[[M]], %[[P]]
// CHECK: return %[[R]]#1, %[[R]]#0
func.func @multi_output(%p: tensor<16xf32>, %g: tensor<16xf32>, %c: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %m = tf.mul %g, %c : tensor<16xf32>
  %p2 = tf.sub %p, %m : tensor<16xf32>
  return %p2, %m : tensor<16xf32>, tensor<16xf32>
}

// -----

// A reduction takes the producers only it reads: the squares of a gradient
// norm are summed in the same loop.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: %[[R:.+]] = tf.fusion "reduction" : tensor<f32> {
// CHECK:   %[[SQ:.+]] = tf.mul %[[G:.+]], %[[G]]
// CHECK:   %[[S:.+]] = tf.reduce_sum %[[SQ]] [0, 1]
// CHECK:   tf.yield %[[S]] : tensor<f32>
// CHECK: tf.sqrt %[[R]]
func.func @sum_of_squares(%g: tensor<32x8xf32>) -> tensor<f32> {
  %sq = tf.mul %g, %g : tensor<32x8xf32>
  %s = tf.reduce_sum %sq [0, 1] : tensor<32x8xf32> -> tensor<f32>
  %n = tf.sqrt %s : tensor<f32>
  return %n : tensor<f32>
}

// -----

// Attention and its gradient are fused ops already (one kernel per head):
// they stay whole, and nothing is pulled into them.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: tf.fusion
// CHECK-NOT: tf.matmul
// CHECK: %[[O:.+]] = tf.attention %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} scale
// CHECK: tf.attention_grad %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} grad %[[O]]
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m: tensor<2x4x4xi1>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %o = tf.attention %q, %k, %v mask %m scale 0.35355339 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xi1> -> tensor<2x4x8xf32>
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v mask %m grad %o scale 0.35355339 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xi1> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return %o, %dq : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// An attention whose weights are read must store them: it is decomposed;
// its scale, mask fill and softmax form one reduction group between the two
// GEMMs, which stay outside.
// CHECK-LABEL: func.func @attention_weights_read
// CHECK: %[[QK:.+]] = tf.matmul %{{.+}}, %{{.+}} transpose_rhs
// CHECK: %[[W:.+]] = tf.fusion "reduction" : tensor<2x4x4xf32> {
// CHECK:   tf.mul %[[QK]]
// CHECK:   tf.select
// CHECK:   tf.softmax
// CHECK:   tf.yield
// CHECK: %[[O:.+]] = tf.matmul %[[W]], %{{.+}} :
// CHECK-NOT: tf.attention
// CHECK: return %[[O]], %[[W]]
func.func @attention_weights_read(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m: tensor<2x4x4xi1>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %o, %w = tf.attention %q, %k, %v mask %m scale 0.35355339 with_weights : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xi1> -> tensor<2x4x8xf32>, tensor<2x4x4xf32>
  return %o, %w : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// Weights nobody reads are dropped: the attention stays fused.
// CHECK-LABEL: func.func @attention_weights_unread
// CHECK-NOT: tf.matmul
// CHECK: %[[O:.+]] = tf.attention %{{.+}}, %{{.+}}, %{{.+}} scale 5.000000e-01 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK: return %[[O]]
func.func @attention_weights_unread(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %o, %w = tf.attention %q, %q, %q scale 0.5 with_weights : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x4xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A producer that is also read by ops outside a reduction group is not
// pulled in (the reduction would compute it a second time); it roots its
// own group with its elementwise producers.
// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[E:.+]] = tf.fusion "loop" : tensor<4x8xf32> {
// CHECK:   tf.neg
// CHECK:   tf.exp
// CHECK:   tf.yield
// CHECK: tf.reduce_sum %[[E]] [1]
// CHECK: tf.matmul %[[E]]
func.func @shared_producer(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %n = tf.neg %x : tensor<4x8xf32>
  %e = tf.exp %n : tensor<4x8xf32>
  %s = tf.reduce_sum %e [1] : tensor<4x8xf32> -> tensor<4xf32>
  %y = tf.matmul %e, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %s, %y : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// A broadcast read by two groups is cloned into each; a small producer
// (exp over the 4 elements of the bias) is not recomputed per element of
// the 8x4 loop.
// CHECK-LABEL: func.func @shared_broadcast
// CHECK: %[[EB:.+]] = tf.exp %{{.+}} : tensor<4xf32>
// CHECK: tf.fusion "loop"
// CHECK:   tf.broadcast_in_dim %[[EB]]
// CHECK:   tf.mul
// CHECK: tf.fusion "gemm"
// CHECK:   tf.broadcast_in_dim %[[EB]]
// CHECK:   tf.matmul
// CHECK:   tf.add
func.func @shared_broadcast(%x: tensor<8x4xf32>, %b: tensor<4xf32>, %w: tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %eb = tf.exp %b : tensor<4xf32>
  %bb = tf.broadcast_in_dim %eb [1] : tensor<4xf32> to tensor<8x4xf32>
  %a = tf.mul %x, %bb : tensor<8x4xf32>
  %y = tf.matmul %a, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %c = tf.add %y, %bb : tensor<8x4xf32>
  return %a, %c : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Nothing to fuse: a lone op stays as it is.
// CHECK-LABEL: func.func @alone
// CHECK-NOT: tf.fusion
// CHECK: tf.relu
func.func @alone(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = tf.relu %x : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A 2-D matmul read only by a loop group joins it: a GEMM with its epilogue
// (bias, activation, residual). The product is not a result of the fusion.
// CHECK-LABEL: func.func @gemm_epilogue
// CHECK: %[[Y:.+]] = tf.fusion "gemm" : tensor<8x4xf32> {
// CHECK:   %[[P:.+]] = tf.matmul %{{.+}}, %{{.+}} transpose_rhs
// CHECK:   %[[B:.+]] = tf.add %[[P]]
// CHECK:   %[[R:.+]] = tf.relu %[[B]]
// CHECK:   %[[S:.+]] = tf.add %[[R]], %{{.+}}
// CHECK:   tf.yield %[[S]] : tensor<8x4xf32>
// CHECK: }
// CHECK: return %[[Y]]
func.func @gemm_epilogue(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %p = tf.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %bb = tf.broadcast_in_dim %b [1] : tensor<4xf32> to tensor<8x4xf32>
  %a = tf.add %p, %bb : tensor<8x4xf32>
  %r = tf.relu %a : tensor<8x4xf32>
  %s = tf.add %r, %x : tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// A lone elementwise op on a product is an epilogue too.
// CHECK-LABEL: func.func @gemm_lone_epilogue
// CHECK: tf.fusion "gemm"
// CHECK:   tf.matmul
// CHECK:   tf.relu
func.func @gemm_lone_epilogue(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %p = tf.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %r = tf.relu %p : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// Not when the product is read elsewhere too (it must be stored whole), nor
// into a reduction group; of two products, one is the GEMM and the other an
// input.
// CHECK-LABEL: func.func @gemm_not_epilogue
// CHECK: %[[P:.+]] = tf.matmul %{{.+}}, %{{.+}} : tensor<8x4xf32>
// CHECK: tf.fusion "loop"
// CHECK:   tf.relu %[[P]]
// CHECK: %[[BP:.+]] = tf.matmul %{{.+}}, %{{.+}} : tensor<2x4x4xf32>
// CHECK: tf.fusion "loop"
// CHECK:   tf.neg %[[BP]]
// CHECK: %[[Q:.+]] = tf.matmul %{{.+}}, %{{.+}} transpose_rhs
// CHECK: tf.fusion "reduction"
// CHECK:   tf.exp %[[Q]]
// CHECK:   tf.reduce_sum
// CHECK: %[[M2:.+]] = tf.matmul %{{.+}}, %{{.+}} transpose_rhs
// CHECK: tf.fusion "gemm"
// CHECK-NEXT: tf.matmul
// CHECK-NEXT: tf.add %{{.+}}, %[[M2]]
// CHECK: return
func.func @gemm_not_epilogue(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>, %bx: tensor<2x4x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<2x4x4xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<2x4x4xf32>) {
  %p = tf.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %r = tf.relu %p : tensor<8x4xf32>
  %e = tf.exp %r : tensor<8x4xf32>
  %bp = tf.matmul %bx, %bx : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %bn = tf.neg %bp : tensor<2x4x4xf32>
  %bm = tf.exp %bn : tensor<2x4x4xf32>
  %bk = tf.add %bp, %bp : tensor<2x4x4xf32>
  %q = tf.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %qe = tf.exp %q : tensor<8x4xf32>
  %qs = tf.reduce_sum %qe [1] : tensor<8x4xf32> -> tensor<8xf32>
  %m1 = tf.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %m2 = tf.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %sum = tf.add %m1, %m2 : tensor<8x4xf32>
  return %p, %e, %bm, %qs, %sum, %bk : tensor<8x4xf32>, tensor<8x4xf32>, tensor<2x4x4xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<2x4x4xf32>
}

// -----

// A batch of products is a GEMM with its epilogue too (its rows are the
// items' rows in turn), and so is a convolution (a batch of [out channels,
// time] products; with its bias): its relu, or in a backward pass the mask
// of a relu before it, read from that relu's output.
// CHECK-LABEL: func.func @gemm_batched_epilogues
// CHECK-SAME: %[[Y:[a-z0-9]+]]: tensor<2x8x6xf32>)
// CHECK: tf.fusion "gemm" : tensor<2x4x4xf32>
// CHECK-NEXT: tf.matmul
// CHECK-NEXT: tf.neg
// CHECK: tf.fusion "gemm" : tensor<2x8x6xf32>
// CHECK-NEXT: tf.conv1d %{{.+}}, %{{.+}}, %{{.+}} padding 1
// CHECK-NEXT: tf.relu
// CHECK: tf.fusion "gemm" : tensor<2x8x6xf32>
// CHECK: %[[DX:.+]] = tf.conv1d
// CHECK-NEXT: %[[GT:.+]] = tf.compare gt, %[[Y]]
// CHECK-NEXT: tf.select %[[GT]], %[[DX]]
func.func @gemm_batched_epilogues(%bx: tensor<2x4x4xf32>, %x: tensor<2x3x6xf32>, %w: tensor<8x3x3xf32>, %b: tensor<8xf32>, %g: tensor<2x8x6xf32>, %w2: tensor<8x8x3xf32>, %y: tensor<2x8x6xf32>) -> (tensor<2x4x4xf32>, tensor<2x8x6xf32>, tensor<2x8x6xf32>) {
  %bp = tf.matmul %bx, %bx : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %bn = tf.neg %bp : tensor<2x4x4xf32>
  %c = tf.conv1d %x, %w, %b padding 1 : tensor<2x3x6xf32>, tensor<8x3x3xf32>, tensor<8xf32> -> tensor<2x8x6xf32>
  %r = tf.relu %c : tensor<2x8x6xf32>
  %zero = tf.constant dense<0.0> : tensor<2x8x6xf32>
  %dx = tf.conv1d %g, %w2 padding 1 : tensor<2x8x6xf32>, tensor<8x8x3xf32> -> tensor<2x8x6xf32>
  %gt = tf.compare gt, %y, %zero : tensor<2x8x6xf32>
  %m = tf.select %gt, %dx, %zero : tensor<2x8x6xi1>, tensor<2x8x6xf32>
  return %bn, %r, %m : tensor<2x4x4xf32>, tensor<2x8x6xf32>, tensor<2x8x6xf32>
}

// -----

// A weight gradient's convolution (per position, its kernel the whole
// sequence) is no GEMM of an epilogue: its consumers fuse as a loop.
// CHECK-LABEL: func.func @gemm_not_weight_gradient
// CHECK: %[[DW:.+]] = tf.conv1d
// CHECK: tf.fusion "loop"
// CHECK:   tf.neg %[[DW]]
func.func @gemm_not_weight_gradient(%x: tensor<3x2x6xf32>, %dy: tensor<3x4x6xf32>) -> tensor<2x4x3xf32> {
  %xt = tf.transpose %x [1, 0, 2] : tensor<3x2x6xf32> -> tensor<2x3x6xf32>
  %dyt = tf.transpose %dy [1, 0, 2] : tensor<3x4x6xf32> -> tensor<4x3x6xf32>
  %dw = tf.conv1d %xt, %dyt padding 1 : tensor<2x3x6xf32>, tensor<4x3x6xf32> -> tensor<2x4x3xf32>
  %n = tf.neg %dw : tensor<2x4x3xf32>
  %e = tf.exp %n : tensor<2x4x3xf32>
  return %e : tensor<2x4x3xf32>
}

// -----

// Loop groups only the return reads (an optimizer's update of each
// parameter, here SGD with momentum) merge into one horizontal group, one
// pass over both shapes; a group read by anything else stays apart.
// HORIZ-LABEL: func.func @update
// HORIZ: %[[ALL:.+]]:4 = tf.fusion "horizontal" : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32> {
// HORIZ-COUNT-2: tf.mul
// HORIZ: tf.sub
// HORIZ-COUNT-2: tf.mul
// HORIZ: tf.sub
// HORIZ: tf.yield
// HORIZ: %[[KEPT:.+]] = tf.fusion "loop" : tensor<4xf32>
// HORIZ: tf.reduce_sum %[[KEPT]]
// HORIZ: return %[[ALL]]#1, %[[ALL]]#0, %[[ALL]]#3, %[[ALL]]#2, %{{.+}}, %[[KEPT]]
func.func @update(%w: tensor<8x4xf32>, %gw: tensor<8x4xf32>, %b: tensor<4xf32>, %gb: tensor<4xf32>, %lr: tensor<f32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) {
  %lw = tf.broadcast_in_dim %lr [] : tensor<f32> to tensor<8x4xf32>
  %mw = tf.mul %gw, %lw : tensor<8x4xf32>
  %sw = tf.mul %mw, %mw : tensor<8x4xf32>
  %nw = tf.sub %w, %sw : tensor<8x4xf32>
  %lb = tf.broadcast_in_dim %lr [] : tensor<f32> to tensor<4xf32>
  %mb = tf.mul %gb, %lb : tensor<4xf32>
  %sb = tf.mul %mb, %mb : tensor<4xf32>
  %nb = tf.sub %b, %sb : tensor<4xf32>
  %k = tf.exp %gb : tensor<4xf32>
  %k2 = tf.neg %k : tensor<4xf32>
  %r = tf.reduce_sum %k2 [0] : tensor<4xf32> -> tensor<f32>
  return %nw, %mw, %nb, %mb, %r, %k2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>
}

// -----

// A transpose that only weight-gradient convolutions (kernel wider than the
// output) read is a view they read through: it stays out of the loop group
// that produces its operand, which writes one layout, not two.
// CHECK-LABEL: func.func @convolution_view
// CHECK: %[[G:.+]] = tf.fusion "loop" : tensor<2x3x6xf32> {
// CHECK-NOT: tf.transpose
// CHECK: tf.yield
// CHECK: %[[T:.+]] = tf.transpose %[[G]] [1, 0, 2]
// CHECK: tf.conv1d %{{.+}}, %[[T]] padding 1
func.func @convolution_view(%x: tensor<3x2x6xf32>, %dy: tensor<2x3x6xf32>, %y: tensor<2x3x6xf32>) -> tensor<3x3x3xf32> {
  %z = tf.constant dense<0.0> : tensor<2x3x6xf32>
  %pos = tf.compare gt, %y, %z : tensor<2x3x6xf32>
  %g = tf.select %pos, %dy, %z : tensor<2x3x6xi1>, tensor<2x3x6xf32>
  %gt = tf.transpose %g [1, 0, 2] : tensor<2x3x6xf32> -> tensor<3x2x6xf32>
  %dw = tf.conv1d %x, %gt padding 1 : tensor<3x2x6xf32>, tensor<3x2x6xf32> -> tensor<3x3x3xf32>
  return %dw : tensor<3x3x3xf32>
}

// -----

// A linear layer on batch x sequence rows reshapes its product back; the
// residual added to it goes into the product's shape instead (x reshaped,
// a view) and joins the GEMM's epilogue; the sum is reshaped back for the
// layer norm. The product's reshape, left unread, is gone.
// CHECK-LABEL: func.func @gemm_residual_through_reshape
// CHECK: tf.reshape %arg0 : tensor<2x4x4xf32> to tensor<8x4xf32>
// CHECK: %[[X:.+]] = tf.reshape %arg0 : tensor<2x4x4xf32> to tensor<8x4xf32>
// CHECK: %[[S:.+]] = tf.fusion "gemm" : tensor<8x4xf32> {
// CHECK:   %[[P:.+]] = tf.matmul
// CHECK:   %[[B:.+]] = tf.add %[[P]], %{{.+}} : tensor<8x4xf32>
// CHECK:   %[[R:.+]] = tf.add %[[X]], %[[B]] : tensor<8x4xf32>
// CHECK:   tf.yield %[[R]]
// CHECK: }
// CHECK: %[[BACK:.+]] = tf.reshape %[[S]] : tensor<8x4xf32> to tensor<2x4x4xf32>
// CHECK: tf.layer_norm %[[BACK]]
// CHECK-NOT: tf.reshape
// CHECK: return
func.func @gemm_residual_through_reshape(%x: tensor<2x4x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<2x4x4xf32> {
  %x2 = tf.reshape %x : tensor<2x4x4xf32> to tensor<8x4xf32>
  %p = tf.matmul %x2, %w transpose_rhs : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %bb = tf.broadcast_in_dim %b [1] : tensor<4xf32> to tensor<8x4xf32>
  %a = tf.add %p, %bb : tensor<8x4xf32>
  %r = tf.reshape %a : tensor<8x4xf32> to tensor<2x4x4xf32>
  %s = tf.add %x, %r : tensor<2x4x4xf32>
  %n = tf.layer_norm %s, %g, %b : tensor<2x4x4xf32>, tensor<4xf32>
  return %n : tensor<2x4x4xf32>
}

// -----

// A lookup (a linear layer on a one-hot, canonicalized to tf.gather in the
// ids' shape and reshaped to rows) is computed element by element: its bias,
// added on the rows, goes to the lookup's shape (the broadcast into the last
// dim), the reshape back to batch x sequence reads the sum directly, and the
// positions added after it join: one loop, with or without GEMM epilogues.
// CHECK-LABEL: func.func @lookup_bias_positions
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x4xi32>, %[[W:.+]]: tensor<8x5xf32>, %[[B:.+]]: tensor<8xf32>, %[[P:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[X:.+]] = tf.fusion "loop" : tensor<2x4x8xf32> {
// CHECK-NEXT:   %[[G:.+]] = tf.gather %[[W]], %[[IDS]] columns
// CHECK-NEXT:   %[[BB:.+]] = tf.broadcast_in_dim %[[B]] [2] : tensor<8xf32> to tensor<2x4x8xf32>
// CHECK-NEXT:   %[[S:.+]] = tf.add %[[G]], %[[BB]] : tensor<2x4x8xf32>
// CHECK-NEXT:   %[[PB:.+]] = tf.broadcast_in_dim %[[P]] [1, 2]
// CHECK-NEXT:   %[[Y:.+]] = tf.add %[[S]], %[[PB]] : tensor<2x4x8xf32>
// CHECK-NEXT:   tf.yield %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[X]]
// GEMMS-LABEL: func.func @lookup_bias_positions
// GEMMS-NEXT: tf.fusion "loop" : tensor<2x4x8xf32> {
// GEMMS-NEXT:   tf.gather
// GEMMS-NOT: tf.reshape
// GEMMS: return
func.func @lookup_bias_positions(%ids: tensor<2x4xi32>, %w: tensor<8x5xf32>, %b: tensor<8xf32>, %pos: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %g = tf.gather %w, %ids columns : tensor<8x5xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %rows = tf.reshape %g : tensor<2x4x8xf32> to tensor<8x8xf32>
  %bb = tf.broadcast_in_dim %b [1] : tensor<8xf32> to tensor<8x8xf32>
  %a = tf.add %rows, %bb : tensor<8x8xf32>
  %back = tf.reshape %a : tensor<8x8xf32> to tensor<2x4x8xf32>
  %pb = tf.broadcast_in_dim %pos [1, 2] : tensor<4x8xf32> to tensor<2x4x8xf32>
  %y = tf.add %back, %pb : tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Backward, a gradient's two terms: the input gradient of a linear layer
// (a product, reshaped) and the residual's. Their sum becomes the GEMM's
// epilogue. A product with two such readers is stored whole: both go to
// its shape all the same, each a loop of its own (without gemm epilogues,
// nothing moves).
// CHECK-LABEL: func.func @gemm_gradient_sum_through_reshape
// CHECK: %[[S:.+]] = tf.fusion "gemm" : tensor<8x4xf32> {
// CHECK:   %[[P:.+]] = tf.matmul
// CHECK:   %[[R:.+]] = tf.add %[[P]], %{{.+}} : tensor<8x4xf32>
// CHECK:   tf.yield %[[R]]
// CHECK: tf.reshape %[[S]] : tensor<8x4xf32> to tensor<2x4x4xf32>
// CHECK: %[[Q:.+]] = tf.matmul
// CHECK: tf.add %[[Q]], %{{.+}} : tensor<8x4xf32>
// CHECK: tf.exp %[[Q]] : tensor<8x4xf32>
// GEMMS-LABEL: func.func @gemm_gradient_sum_through_reshape
// GEMMS-NOT: tf.fusion "gemm"
// GEMMS: %[[P:.+]] = tf.matmul
// GEMMS: %[[PR:.+]] = tf.reshape %[[P]] : tensor<8x4xf32> to tensor<2x4x4xf32>
// GEMMS: tf.add %[[PR]], %arg0 : tensor<2x4x4xf32>
func.func @gemm_gradient_sum_through_reshape(%dres: tensor<2x4x4xf32>, %dy: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %p = tf.matmul %dy, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %pr = tf.reshape %p : tensor<8x4xf32> to tensor<2x4x4xf32>
  %dx = tf.add %pr, %dres : tensor<2x4x4xf32>
  %q = tf.matmul %dy, %w transpose_rhs : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %qr = tf.reshape %q : tensor<8x4xf32> to tensor<2x4x4xf32>
  %dq = tf.add %qr, %dres : tensor<2x4x4xf32>
  %e = tf.exp %qr : tensor<2x4x4xf32>
  return %dx, %dq, %e : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
}

// -----

// A relu after a reshaped product, and backward its mask on another
// product: both go to the products' shape and into their epilogues; the
// mask's compare, read only by the select, is redone there on the relu's
// result in that shape, and the zeros with it.
// CHECK-LABEL: func.func @gemm_relu_mask_through_reshape
// CHECK: %[[H:.+]] = tf.fusion "gemm" : tensor<8x4xf32> {
// CHECK:   tf.matmul
// CHECK:   %[[R:.+]] = tf.relu %{{.+}} : tensor<8x4xf32>
// CHECK:   tf.yield %[[R]]
// CHECK: %[[HR:.+]] = tf.reshape %[[H]] : tensor<8x4xf32> to tensor<2x4x4xf32>
// CHECK: %[[G:.+]] = tf.fusion "gemm" : tensor<8x4xf32> {
// CHECK:   %[[Q:.+]] = tf.matmul
// CHECK:   %[[POS:.+]] = tf.compare gt, %[[H]], %{{.+}} : tensor<8x4xf32>
// CHECK:   %[[S:.+]] = tf.select %[[POS]], %[[Q]], %{{.+}} : tensor<8x4xi1>, tensor<8x4xf32>
// CHECK:   tf.yield %[[S]]
// CHECK: %[[GR:.+]] = tf.reshape %[[G]] : tensor<8x4xf32> to tensor<2x4x4xf32>
// CHECK: return %[[HR]], %[[GR]]
func.func @gemm_relu_mask_through_reshape(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>, %dy: tensor<8x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %p = tf.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %pr = tf.reshape %p : tensor<8x4xf32> to tensor<2x4x4xf32>
  %h = tf.relu %pr : tensor<2x4x4xf32>
  %q = tf.matmul %dy, %w transpose_rhs : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %qr = tf.reshape %q : tensor<8x4xf32> to tensor<2x4x4xf32>
  %z = tf.constant dense<0.0> : tensor<2x4x4xf32>
  %pos = tf.compare gt, %h, %z : tensor<2x4x4xf32>
  %g = tf.select %pos, %qr, %z : tensor<2x4x4xi1>, tensor<2x4x4xf32>
  return %h, %g : tensor<2x4x4xf32>, tensor<2x4x4xf32>
}

// -----

// A dropout's mask is a function of its seed, its key and the flat index:
// in the product's shape it drops the same elements, and joins the
// epilogue; its seed stays as it is.
// CHECK-LABEL: func.func @gemm_dropout_through_reshape
// CHECK: %[[Y:.+]] = tf.fusion "gemm" : tensor<8x4xf32> {
// CHECK:   %[[P:.+]] = tf.matmul
// CHECK:   %[[D:.+]] = tf.dropout %[[P]], %arg2 rate 1.000000e-01 key 7 training : tensor<8x4xf32>
// CHECK:   tf.yield %[[D]]
// CHECK: tf.reshape %[[Y]] : tensor<8x4xf32> to tensor<2x4x4xf32>
func.func @gemm_dropout_through_reshape(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>, %seed: tensor<i32>) -> tensor<2x4x4xf32> {
  %p = tf.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %pr = tf.reshape %p : tensor<8x4xf32> to tensor<2x4x4xf32>
  %d = tf.dropout %pr, %seed rate 1.000000e-01 key 7 training : tensor<2x4x4xf32>
  return %d : tensor<2x4x4xf32>
}
