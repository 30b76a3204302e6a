// tf.cross_entropy_grad per backend. On CUDA one call of the runtime's
// tfc_cuda_cross_entropy_backward (the hand-written kernel), the logits read
// [outer, classes, inner] around the class axis, the label positions' count,
// the logits, the labels, the adjoint g (a pointer: read on the device) and
// dlogits. On the CPU tf-decompose spells it out first, in the ops cross_entropy's
// VJP emitted before the op existed (the CPU's code and bits unchanged), and
// tf-lower-to-linalg refuses it undecomposed.
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg=kernels=cuda | FileCheck %s --check-prefix=CUDA
// RUN: tf-opt %s --split-input-file --tf-decompose=ops=cross_entropy_grad | FileCheck %s --check-prefix=CPU
// RUN: tf-opt %s --split-input-file --tf-decompose=ops=cross_entropy_grad --tf-lower-to-linalg | FileCheck %s --check-prefix=CPU-LINALG
// RUN: not tf-opt %s --split-input-file --tf-lower-to-linalg 2>&1 | FileCheck %s --check-prefix=UNDECOMPOSED
// The pipelines: the CPU's train step has the decomposition (fused with its
// neighbours), CUDA's the call, cuda-emulated's the CPU twin; the train
// step's loss and its gradient are one call (tfc_cuda_cross_entropy_fused:
// tests/lit/lowering/cuda/cross-entropy-fused.mlir) unless
// --no-fused-cross-entropy.
// RUN: tfc compile %S/Inputs/cross-entropy-train.mlir --emit=fused | FileCheck %s --check-prefix=CPU-FUSED
// RUN: tfc compile %S/Inputs/cross-entropy-train.mlir --emit=linalg --target=cuda | FileCheck %s --check-prefix=CUDA-PIPELINE
// RUN: tfc compile %S/Inputs/cross-entropy-train.mlir --emit=linalg --target=cuda --no-fused-cross-entropy | FileCheck %s --check-prefix=CUDA-PAIR
// RUN: tfc compile %S/Inputs/cross-entropy-train.mlir --emit=llvm --target=cuda-emulated | FileCheck %s --check-prefix=EMULATED
// RUN: tfc compile %S/Inputs/cross-entropy-train.mlir --emit=llvm --target=cuda-emulated --no-fused-cross-entropy | FileCheck %s --check-prefix=EMULATED-PAIR

// CPU-LINALG-NOT: call @tfc_
// CPU-LINALG-NOT: tf.
// UNDECOMPOSED: error: tf.cross_entropy_grad has no lowering but the CUDA runtime's kernel; run tf-decompose{ops=cross_entropy_grad} first

// The class axis last: 64 rows of 10 classes, a stride of 1.
// CUDA-LABEL: func.func @last
// CUDA-SAME: (%[[L:.+]]: tensor<4x16x10xf32>, %[[Y:.+]]: tensor<4x16xi32>, %[[G:.+]]: tensor<f32>)
// CUDA-DAG: %[[C64:.+]] = arith.constant 64 : index
// CUDA-DAG: %[[C10:.+]] = arith.constant 10 : index
// CUDA-DAG: %[[C1:.+]] = arith.constant 1 : index
// CUDA-DAG: %[[N:.+]] = arith.constant 6.400000e+01 : f32
// CUDA: %[[LM:.+]] = bufferization.to_memref %[[L]]
// CUDA: %[[LP:.+]] = memref.extract_aligned_pointer_as_index %[[LM]]
// CUDA: %[[YM:.+]] = bufferization.to_memref %[[Y]]
// CUDA: %[[YP:.+]] = memref.extract_aligned_pointer_as_index %[[YM]]
// CUDA: %[[GM:.+]] = bufferization.to_memref %[[G]]
// CUDA: %[[GP:.+]] = memref.extract_aligned_pointer_as_index %[[GM]]
// CUDA: %[[D:.+]] = memref.alloc() : memref<4x16x10xf32>
// CUDA: %[[DP:.+]] = memref.extract_aligned_pointer_as_index %[[D]]
// CUDA: call @tfc_cuda_cross_entropy_backward(%[[C64]], %[[C10]], %[[C1]], %[[N]], %[[LP]], %[[YP]], %[[GP]], %[[DP]])
// CUDA: %[[R:.+]] = bufferization.to_tensor %[[D]]
// CUDA: return %[[R]]
// CUDA: func.func private @tfc_cuda_cross_entropy_backward(index, index, index, f32, index, index, index, index)

// CPU-LABEL: func.func @last
// CPU-SAME: (%[[L:.+]]: tensor<4x16x10xf32>, %[[Y:.+]]: tensor<4x16xi32>, %[[G:.+]]: tensor<f32>)
// CPU-NOT: tf.cross_entropy_grad
// CPU: %[[OH:.+]] = tf.one_hot %[[Y]] depth 10 : tensor<4x16xi32> -> tensor<4x16x10xf32>
// CPU-NOT: tf.transpose
// CPU: %[[P:.+]] = tf.softmax %[[L]] axis 2 : tensor<4x16x10xf32>
// CPU: %[[GB:.+]] = tf.broadcast_in_dim %[[G]] [] : tensor<f32> to tensor<4x16x10xf32>
// CPU: %[[N:.+]] = tf.constant dense<6.400000e+01> : tensor<4x16x10xf32>
// CPU: %[[S:.+]] = tf.div %[[GB]], %[[N]] : tensor<4x16x10xf32>
// CPU: %[[PD:.+]] = tf.sub %[[P]], %[[OH]] : tensor<4x16x10xf32>
// CPU: %[[D:.+]] = tf.mul %[[PD]], %[[S]] : tensor<4x16x10xf32>
// CPU: return %[[D]]
func.func @last(%logits: tensor<4x16x10xf32>, %ids: tensor<4x16xi32>, %g: tensor<f32>) -> tensor<4x16x10xf32> {
  %0 = tf.cross_entropy_grad %logits, %ids grad %g axis 2 : tensor<4x16x10xf32>, tensor<4x16xi32>, tensor<f32>
  return %0 : tensor<4x16x10xf32>
}

// -----

// The class axis in the middle: 4 outer rows, 10 classes 16 floats apart,
// 16 inner positions; the one-hot (classes last) moved to the class axis.
// CUDA-LABEL: func.func @middle
// CUDA-DAG: %[[C4:.+]] = arith.constant 4 : index
// CUDA-DAG: %[[C10:.+]] = arith.constant 10 : index
// CUDA-DAG: %[[C16:.+]] = arith.constant 16 : index
// CUDA-DAG: %[[N:.+]] = arith.constant 6.400000e+01 : f32
// CUDA: memref.alloc() : memref<4x10x16xf32>
// CUDA: call @tfc_cuda_cross_entropy_backward(%[[C4]], %[[C10]], %[[C16]], %[[N]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})

// CPU-LABEL: func.func @middle
// CPU-SAME: (%[[L:.+]]: tensor<4x10x16xf32>, %[[Y:.+]]: tensor<4x16xi32>, %[[G:.+]]: tensor<f32>)
// CPU: %[[OH:.+]] = tf.one_hot %[[Y]] depth 10 : tensor<4x16xi32> -> tensor<4x16x10xf32>
// CPU: %[[OHT:.+]] = tf.transpose %[[OH]] [0, 2, 1] : tensor<4x16x10xf32> -> tensor<4x10x16xf32>
// CPU: %[[P:.+]] = tf.softmax %[[L]] axis 1 : tensor<4x10x16xf32>
// CPU: %[[GB:.+]] = tf.broadcast_in_dim %[[G]] [] : tensor<f32> to tensor<4x10x16xf32>
// CPU: %[[N:.+]] = tf.constant dense<6.400000e+01> : tensor<4x10x16xf32>
// CPU: %[[S:.+]] = tf.div %[[GB]], %[[N]] : tensor<4x10x16xf32>
// CPU: %[[PD:.+]] = tf.sub %[[P]], %[[OHT]] : tensor<4x10x16xf32>
// CPU: %[[D:.+]] = tf.mul %[[PD]], %[[S]] : tensor<4x10x16xf32>
// CPU: return %[[D]]
func.func @middle(%logits: tensor<4x10x16xf32>, %ids: tensor<4x16xi32>, %g: tensor<f32>) -> tensor<4x10x16xf32> {
  %0 = tf.cross_entropy_grad %logits, %ids grad %g axis 1 : tensor<4x10x16xf32>, tensor<4x16xi32>, tensor<f32>
  return %0 : tensor<4x10x16xf32>
}

// -----

// The class axis first: no outer rows (1), 10 classes 64 floats apart.
// CUDA-LABEL: func.func @first
// CUDA-DAG: %[[C1:.+]] = arith.constant 1 : index
// CUDA-DAG: %[[C10:.+]] = arith.constant 10 : index
// CUDA-DAG: %[[C64:.+]] = arith.constant 64 : index
// CUDA: call @tfc_cuda_cross_entropy_backward(%[[C1]], %[[C10]], %[[C64]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CPU-LABEL: func.func @first
// CPU: tf.transpose %{{.+}} [2, 0, 1] : tensor<4x16x10xf32> -> tensor<10x4x16xf32>
// CPU: tf.softmax %{{.+}} axis 0 : tensor<10x4x16xf32>
func.func @first(%logits: tensor<10x4x16xf32>, %ids: tensor<4x16xi32>, %g: tensor<f32>) -> tensor<10x4x16xf32> {
  %0 = tf.cross_entropy_grad %logits, %ids grad %g axis 0 : tensor<10x4x16xf32>, tensor<4x16xi32>, tensor<f32>
  return %0 : tensor<10x4x16xf32>
}

// CPU-FUSED-LABEL: func.func @train_step
// CPU-FUSED-NOT: tf.cross_entropy_grad
// CPU-FUSED: tf.cross_entropy %{{.+}}, %{{.+}} axis 2
// CPU-FUSED: tf.softmax %{{.+}} axis 2 : tensor<2x3x5xf32>
// CPU-FUSED: tf.fusion
// CPU-FUSED: tf.one_hot %{{.+}} depth 5
// CPU-FUSED-NOT: tf.cross_entropy_grad
// CPU-FUSED: return

// CUDA-PIPELINE-LABEL: func.func @train_step
// CUDA-PIPELINE-NOT: call @tfc_cuda_cross_entropy(
// CUDA-PIPELINE: call @tfc_cuda_cross_entropy_fused(%c6, %c5, %c1, %{{.+}}
// CUDA-PIPELINE-NOT: call @tfc_cuda_cross_entropy_backward(
// CUDA-PIPELINE-NOT: math.exp
// CUDA-PIPELINE: return

// CUDA-PAIR-LABEL: func.func @train_step
// CUDA-PAIR: call @tfc_cuda_cross_entropy(%c6, %c5, %c1, %{{.+}}
// CUDA-PAIR: call @tfc_cuda_cross_entropy_backward(%c6, %c5, %c1, %{{.+}}
// CUDA-PAIR-NOT: math.exp
// CUDA-PAIR-NOT: @tfc_cuda_cross_entropy_fused
// CUDA-PAIR: return

// EMULATED-LABEL: define void @tfc_entry_train_step(
// EMULATED: call void @tfc_cross_entropy_fused(i64 6, i64 5, i64 1, float 6.000000e+00,
// EMULATED-NOT: @tfc_cuda_cross_entropy

// EMULATED-PAIR-LABEL: define void @tfc_entry_train_step(
// EMULATED-PAIR: call void @tfc_cross_entropy(i64 6, i64 5, i64 1, float 6.000000e+00,
// EMULATED-PAIR: call void @tfc_cross_entropy_backward(i64 6, i64 5, i64 1, float 6.000000e+00,
// EMULATED-PAIR-NOT: @tfc_cuda_cross_entropy
