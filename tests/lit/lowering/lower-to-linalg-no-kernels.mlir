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

// -----

// Without kernels, dropout draws its mask in the loop that applies it: one
// elementwise generic reads x and the seed (a 0-d input, so nothing is
// loaded outside the loop), numbers the element row-major (i = row x 8 +
// column; rows of 8, a multiple of 4, so its group of four g = i / 4 is
// row x 2 + column / 4 and its lane column % 4), and computes
// runtime/Philox.h's dropoutWords for the group: counter {g lo, g
// hi, key hi = 0, 0}, key {seed, key lo = 3}, ten rounds of two 32 x 32 ->
// 64-bit products. Word i % 4 below ceil(0.25 * 2^32) = 1073741824
// (unsigned) drops the element; the rest are scaled by 1 / 0.75, as the CPU
// lowering applies its mask. Without `training` dropout is the identity.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[S:.+]]: tensor<i32>)
// CHECK-NOT: call
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[SCALAR:.+]], #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[S]] : tensor<4x8xf32>, tensor<i32>) outs(%{{.+}} : tensor<4x8xf32>)
// CHECK: ^bb0(%[[XE:.+]]: f32, %[[SEED:.+]]: i32, %{{.+}}: f32):
// CHECK: %[[ROW:.+]] = linalg.index 0 : index
// CHECK: %[[COL:.+]] = linalg.index 1 : index
// CHECK: %[[C:.+]] = arith.index_castui %[[COL]] : index to i64
// CHECK: %[[Q:.+]] = arith.shrui %[[C]], %c2_i64
// CHECK: %[[RI:.+]] = arith.index_castui %{{.+}} : index to i64
// CHECK: %[[RG:.+]] = arith.muli %[[RI]], %c2_i64
// CHECK: %[[G:.+]] = arith.addi %[[RG]], %[[Q]] : i64
// CHECK: %[[LANE:.+]] = arith.andi %[[C]], %c3_i64
// CHECK: %[[GLO:.+]] = arith.trunci %[[G]] : i64 to i32
// CHECK-COUNT-20: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: %[[DROP:.+]] = arith.cmpi ult, %{{.+}}, %{{.+}} : i32
// CHECK: arith.divf %[[XE]]
// CHECK: arith.select %[[DROP]]
// CHECK: return %[[R]], %[[X]]
// CPU-LABEL: func.func @dropout
// CPU: call @tfc_dropout_mask
func.func @dropout(%x: tensor<4x8xf32>, %s: tensor<i32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tf.dropout %x, %s rate 0.25 key 3 training : tensor<4x8xf32>
  %1 = tf.dropout %x, %s rate 0.25 key 4 : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// With a sample offset (a rank's share of a data-parallel batch), the
// offset is a third 0-d input of the loop, sign-extended: element i of the
// rank's batch is element offset x 8 (the elements of a sample) + i of the
// whole batch, so the masks of the same samples are the same in one process
// with the whole batch. A sample of 8 elements (a multiple of 4) starts a
// Philox block: the group is offset x 2 + i / 4 and the lane i % 4, from
// the row-major number alone (4 consecutive elements visibly share a block).
// CHECK-LABEL: func.func @dropout_sample_offset
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[S:.+]]: tensor<i32>, %[[O:.+]]: tensor<i32>)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[SCALAR:.+]], #[[SCALAR]], #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[S]], %[[O]] : tensor<4x8xf32>, tensor<i32>, tensor<i32>)
// CHECK: ^bb0(%{{.+}}: f32, %{{.+}}: i32, %[[OFF:.+]]: i32, %{{.+}}: f32):
// CHECK: %[[C:.+]] = arith.index_castui %{{.+}} : index to i64
// CHECK: %[[Q:.+]] = arith.shrui %[[C]]
// CHECK: %[[RG:.+]] = arith.muli %{{.+}}, %c2_i64
// CHECK: %[[G:.+]] = arith.addi %[[RG]], %[[Q]] : i64
// CHECK: arith.andi %[[C]], %c3_i64
// CHECK-DAG: %[[OFF64:.+]] = arith.extsi %[[OFF]] : i32 to i64
// CHECK: %[[FIRST:.+]] = arith.muli %[[OFF64]], %c2_i64{{.*}} : i64
// CHECK: %[[GROUP:.+]] = arith.addi %[[FIRST]], %[[G]] : i64
// CHECK: arith.trunci %[[GROUP]]
// CHECK-COUNT-20: arith.mului_extended
// CPU-LABEL: func.func @dropout_sample_offset
// CPU: call @tfc_dropout_mask
func.func @dropout_sample_offset(%x: tensor<4x8xf32>, %s: tensor<i32>, %o: tensor<i32>) -> tensor<4x8xf32> {
  %0 = tf.dropout %x, %s sample_offset %o sample_size 8 rate 0.25 key 3 training : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Rows and samples of 6 elements: a Philox block may straddle two, so the
// row-major number (row x 6 + column) and the offset's first element are
// added before the number is split into group and lane.
// CHECK-LABEL: func.func @dropout_sample_offset_odd
// CHECK: ^bb0(%{{.+}}: f32, %{{.+}}: i32, %[[OFF:.+]]: i32, %{{.+}}: f32):
// CHECK: %[[I:.+]] = arith.addi %{{.+}}, %{{.+}} : i64
// CHECK-DAG: %[[OFF64:.+]] = arith.extsi %[[OFF]] : i32 to i64
// CHECK-DAG: %[[SIZE:.+]] = arith.constant 6 : i64
// CHECK: %[[FIRST:.+]] = arith.muli %[[OFF64]], %[[SIZE]] : i64
// CHECK: %[[INDEX:.+]] = arith.addi %[[FIRST]], %[[I]] : i64
// CHECK: arith.shrui %[[INDEX]]
// CHECK: arith.andi %[[INDEX]]
// CHECK-COUNT-20: arith.mului_extended
// CPU-LABEL: func.func @dropout_sample_offset_odd
// CPU: call @tfc_dropout_mask
func.func @dropout_sample_offset_odd(%x: tensor<4x6xf32>, %s: tensor<i32>, %o: tensor<i32>) -> tensor<4x6xf32> {
  %0 = tf.dropout %x, %s sample_offset %o sample_size 6 rate 0.25 key 3 training : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
