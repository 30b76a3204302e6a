// A train step's tf.cross_entropy and tf.cross_entropy_grad of the same
// logits and labels (llm.c's fused classifier): with kernels=cuda one call of
// tfc_cuda_cross_entropy_fused where the loss was, each row's logits read once
// for its loss and its dlogits: [outer, classes, inner], the label count, the
// logits, the labels, the adjoint g (a pointer, read on the device), the rows'
// losses (scratch), the loss and dlogits. Only where the two read the same
// values on the same axis and g is there at the loss; else the two calls.
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg=kernels=cuda | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg="kernels=cuda fused-cross-entropy=false" | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @pair
// CHECK-SAME: (%[[L:.+]]: tensor<64x10xf32>, %[[Y:.+]]: tensor<64xi32>, %[[G:.+]]: tensor<f32>)
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C10:.+]] = arith.constant 10 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[N:.+]] = arith.constant 6.400000e+01 : f32
// CHECK: %[[LM:.+]] = bufferization.to_memref %[[L]]
// CHECK: %[[LP:.+]] = memref.extract_aligned_pointer_as_index %[[LM]]
// CHECK: %[[YM:.+]] = bufferization.to_memref %[[Y]]
// CHECK: %[[YP:.+]] = memref.extract_aligned_pointer_as_index %[[YM]]
// CHECK: %[[GM:.+]] = bufferization.to_memref %[[G]]
// CHECK: %[[GP:.+]] = memref.extract_aligned_pointer_as_index %[[GM]]
// CHECK: %[[ROWS:.+]] = memref.alloc() : memref<64xf32>
// CHECK: %[[ROWSP:.+]] = memref.extract_aligned_pointer_as_index %[[ROWS]]
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<f32>
// CHECK: %[[OUTP:.+]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[D:.+]] = memref.alloc() : memref<64x10xf32>
// CHECK: %[[DP:.+]] = memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: call @tfc_cuda_cross_entropy_fused(%[[C64]], %[[C10]], %[[C1]], %[[N]], %[[LP]], %[[YP]], %[[GP]], %[[ROWSP]], %[[OUTP]], %[[DP]])
// CHECK-DAG: %[[LOSS:.+]] = bufferization.to_tensor %[[OUT]]
// CHECK-DAG: %[[DL:.+]] = bufferization.to_tensor %[[D]]
// CHECK-NOT: call @tfc_cuda_cross_entropy
// CHECK: return %[[LOSS]], %[[DL]]
// CHECK: func.func private @tfc_cuda_cross_entropy_fused(index, index, index, f32, index, index, index, index, index, index)
// OFF-LABEL: func.func @pair
// OFF: call @tfc_cuda_cross_entropy(
// OFF: call @tfc_cuda_cross_entropy_backward(
// OFF-NOT: @tfc_cuda_cross_entropy_fused
func.func @pair(%logits: tensor<64x10xf32>, %ids: tensor<64xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<64x10xf32>) {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<64x10xf32>, tensor<64xi32>
  %1 = tf.cross_entropy_grad %logits, %ids grad %g axis 1 : tensor<64x10xf32>, tensor<64xi32>, tensor<f32>
  return %0, %1 : tensor<f32>, tensor<64x10xf32>
}

// -----

// Autodiff's seed, a constant defined after the loss, is cloned there; the
// class axis in the middle.
// CHECK-LABEL: func.func @seed
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C10:.+]] = arith.constant 10 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: bufferization.to_memref %[[ONE]]
// CHECK: call @tfc_cuda_cross_entropy_fused(%[[C4]], %[[C10]], %[[C16]],
// CHECK-NOT: call @tfc_cuda_cross_entropy
// CHECK: return
func.func @seed(%logits: tensor<4x10x16xf32>, %ids: tensor<4x16xi32>) -> (tensor<f32>, tensor<4x10x16xf32>) {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<4x10x16xf32>, tensor<4x16xi32>
  %g = tf.constant dense<1.0> : tensor<f32>
  %1 = tf.cross_entropy_grad %logits, %ids grad %g axis 1 : tensor<4x10x16xf32>, tensor<4x16xi32>, tensor<f32>
  return %0, %1 : tensor<f32>, tensor<4x10x16xf32>
}

// -----

// The logits the gradient reads are another value (written after the loss
// read them): two calls.
// CHECK-LABEL: func.func @logits_written_between
// CHECK: call @tfc_cuda_cross_entropy(
// CHECK: call @tfc_cuda_cross_entropy_backward(
// CHECK-NOT: @tfc_cuda_cross_entropy_fused
func.func @logits_written_between(%logits: tensor<64x10xf32>, %ids: tensor<64xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<64x10xf32>) {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<64x10xf32>, tensor<64xi32>
  %x = tf.add %logits, %logits : tensor<64x10xf32>
  %1 = tf.cross_entropy_grad %x, %ids grad %g axis 1 : tensor<64x10xf32>, tensor<64xi32>, tensor<f32>
  return %0, %1 : tensor<f32>, tensor<64x10xf32>
}

// -----

// Other labels: two calls.
// CHECK-LABEL: func.func @other_labels
// CHECK: call @tfc_cuda_cross_entropy(
// CHECK: call @tfc_cuda_cross_entropy_backward(
// CHECK-NOT: @tfc_cuda_cross_entropy_fused
func.func @other_labels(%logits: tensor<64x10xf32>, %ids: tensor<64xi32>, %other: tensor<64xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<64x10xf32>) {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<64x10xf32>, tensor<64xi32>
  %1 = tf.cross_entropy_grad %logits, %other grad %g axis 1 : tensor<64x10xf32>, tensor<64xi32>, tensor<f32>
  return %0, %1 : tensor<f32>, tensor<64x10xf32>
}

// -----

// Another class axis of square logits: two calls.
// CHECK-LABEL: func.func @other_axis
// CHECK: call @tfc_cuda_cross_entropy(
// CHECK: call @tfc_cuda_cross_entropy_backward(
// CHECK-NOT: @tfc_cuda_cross_entropy_fused
func.func @other_axis(%logits: tensor<10x10xf32>, %ids: tensor<10xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<10x10xf32>) {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<10x10xf32>, tensor<10xi32>
  %1 = tf.cross_entropy_grad %logits, %ids grad %g axis 0 : tensor<10x10xf32>, tensor<10xi32>, tensor<f32>
  return %0, %1 : tensor<f32>, tensor<10x10xf32>
}

// -----

// The adjoint computed from the loss itself is not there at the loss: two
// calls.
// CHECK-LABEL: func.func @adjoint_after_the_loss
// CHECK: call @tfc_cuda_cross_entropy(
// CHECK: call @tfc_cuda_cross_entropy_backward(
// CHECK-NOT: @tfc_cuda_cross_entropy_fused
func.func @adjoint_after_the_loss(%logits: tensor<64x10xf32>, %ids: tensor<64xi32>) -> (tensor<f32>, tensor<64x10xf32>) {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<64x10xf32>, tensor<64xi32>
  %g = tf.mul %0, %0 : tensor<f32>
  %1 = tf.cross_entropy_grad %logits, %ids grad %g axis 1 : tensor<64x10xf32>, tensor<64xi32>, tensor<f32>
  return %0, %1 : tensor<f32>, tensor<64x10xf32>
}

// -----

// The gradient alone, and the loss alone: one call each of their own.
// CHECK-LABEL: func.func @gradient_alone
// CHECK: call @tfc_cuda_cross_entropy_backward(
// CHECK-NOT: @tfc_cuda_cross_entropy_fused
func.func @gradient_alone(%logits: tensor<64x10xf32>, %ids: tensor<64xi32>, %g: tensor<f32>) -> tensor<64x10xf32> {
  %0 = tf.cross_entropy_grad %logits, %ids grad %g axis 1 : tensor<64x10xf32>, tensor<64xi32>, tensor<f32>
  return %0 : tensor<64x10xf32>
}

// CHECK-LABEL: func.func @loss_alone
// CHECK: call @tfc_cuda_cross_entropy(
// CHECK-NOT: @tfc_cuda_cross_entropy_fused
func.func @loss_alone(%logits: tensor<64x10xf32>, %ids: tensor<64xi32>) -> tensor<f32> {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<64x10xf32>, tensor<64xi32>
  return %0 : tensor<f32>
}
