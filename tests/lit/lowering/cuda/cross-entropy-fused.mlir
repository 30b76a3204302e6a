// A train step's tf.cross_entropy and tf.cross_entropy_grad of the same
// logits and labels (llm.c's fused classifier): with kernels=cuda one call of
// tfc_cuda_cross_entropy_fused where the loss was, each row's logits read once
// for its loss and its dlogits: [outer, classes, inner], the label count, the
// logits, the labels, the adjoint g (a pointer, read on the device), the rows'
// losses (scratch), the loss and dlogits, then the rows' 1 or 0 (scratch)
// and the accuracy, or 0 and 0, and 0: dlogits in f32 (tf-bf16-gemm-operands
// may make it bf16 bits). Only where the two read the same values on
// the same axis and g is there at the loss; else the two calls. An accuracy
// metric of the same logits and labels (a tf.argmax over the class axis
// read only by a fusion of compare eq with the labels, cast and
// reduce_mean over every axis) becomes the call's last result, the argmax
// and its fusion gone.
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
// CHECK: call @tfc_cuda_cross_entropy_fused(%[[C64]], %[[C10]], %[[C1]], %[[N]], %[[LP]], %[[YP]], %[[GP]], %[[ROWSP]], %[[OUTP]], %[[DP]], %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK-DAG: %[[LOSS:.+]] = bufferization.to_tensor %[[OUT]]
// CHECK-DAG: %[[DL:.+]] = bufferization.to_tensor %[[D]]
// CHECK-NOT: call @tfc_cuda_cross_entropy
// CHECK: return %[[LOSS]], %[[DL]]
// CHECK: func.func private @tfc_cuda_cross_entropy_fused(index, index, index, f32, index, index, index, index, index, index, index, index, index)
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

// -----

// The accuracy metric of the same logits and labels: the call's corrects
// (64 floats) and accuracy (its last result); no argmax left.
// CHECK-LABEL: func.func @accuracy
// CHECK: %[[ROWS:.+]] = memref.alloc() : memref<64xf32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<f32>
// CHECK: %[[D:.+]] = memref.alloc() : memref<64x10xf32>
// CHECK: %[[RIGHT:.+]] = memref.alloc() : memref<64xf32>
// CHECK: %[[RIGHTP:.+]] = memref.extract_aligned_pointer_as_index %[[RIGHT]]
// CHECK: %[[ACC:.+]] = memref.alloc() : memref<f32>
// CHECK: %[[ACCP:.+]] = memref.extract_aligned_pointer_as_index %[[ACC]]
// CHECK: call @tfc_cuda_cross_entropy_fused({{.+}}, %[[RIGHTP]], %[[ACCP]], %c0{{(_[0-9]+)?}})
// CHECK-DAG: %[[A:.+]] = bufferization.to_tensor %[[ACC]]
// CHECK-NOT: arith.cmpf ogt
// CHECK: return {{.+}}, %[[A]]
// OFF-LABEL: func.func @accuracy
// OFF: arith.cmpf ogt
func.func @accuracy(%logits: tensor<64x10xf32>, %ids: tensor<64xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<64x10xf32>, tensor<f32>) {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<64x10xf32>, tensor<64xi32>
  %a = tf.argmax %logits axis 1 : tensor<64x10xf32> -> tensor<64xi32>
  %m = tf.fusion "reduction" : tensor<f32> {
    %e = tf.compare eq, %a, %ids : tensor<64xi32>
    %f = tf.cast %e : tensor<64xi1> to tensor<64xf32>
    %r = tf.reduce_mean %f [0] : tensor<64xf32> -> tensor<f32>
    tf.yield %r : tensor<f32>
  }
  %1 = tf.cross_entropy_grad %logits, %ids grad %g axis 1 : tensor<64x10xf32>, tensor<64xi32>, tensor<f32>
  return %0, %1, %m : tensor<f32>, tensor<64x10xf32>, tensor<f32>
}

// -----

// Not the accuracy: other labels, or the argmax read elsewhere too. Both
// stay loops, and the call gets 0 and 0.
// CHECK-LABEL: func.func @not_accuracy
// CHECK: call @tfc_cuda_cross_entropy_fused({{.+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf ogt
func.func @not_accuracy(%logits: tensor<64x10xf32>, %ids: tensor<64xi32>, %other: tensor<64xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<64x10xf32>, tensor<f32>, tensor<f32>, tensor<64xi32>) {
  %0 = tf.cross_entropy %logits, %ids axis 1 : tensor<64x10xf32>, tensor<64xi32>
  %a = tf.argmax %logits axis 1 : tensor<64x10xf32> -> tensor<64xi32>
  %m = tf.fusion "reduction" : tensor<f32> {
    %e = tf.compare eq, %a, %other : tensor<64xi32>
    %f = tf.cast %e : tensor<64xi1> to tensor<64xf32>
    %r = tf.reduce_mean %f [0] : tensor<64xf32> -> tensor<f32>
    tf.yield %r : tensor<f32>
  }
  %b = tf.argmax %logits axis 1 : tensor<64x10xf32> -> tensor<64xi32>
  %n = tf.fusion "reduction" : tensor<f32> {
    %e = tf.compare eq, %b, %ids : tensor<64xi32>
    %f = tf.cast %e : tensor<64xi1> to tensor<64xf32>
    %r = tf.reduce_mean %f [0] : tensor<64xf32> -> tensor<f32>
    tf.yield %r : tensor<f32>
  }
  %1 = tf.cross_entropy_grad %logits, %ids grad %g axis 1 : tensor<64x10xf32>, tensor<64xi32>, tensor<f32>
  return %0, %1, %m, %n, %b : tensor<f32>, tensor<64x10xf32>, tensor<f32>, tensor<f32>, tensor<64xi32>
}
