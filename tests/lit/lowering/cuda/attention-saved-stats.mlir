// On the GPU (kernels=cuda) an attention forward whose backward follows in
// the same function (the same q, k, v, mask and scale) stores its rows'
// statistics, 16 bytes a (head, query row), in a fresh buffer (its last
// argument), and the backward takes the forward's out (pointer and strides)
// and those statistics, then room for dS, as its last six arguments: it
// then neither recomputes a row's maximum and sum nor D (cuda-kernels.md).
// Room for dS (heads x tq rows of tk rounded up to 8, f32) only with
// attention-ds (the CUDA pipeline's), and none with tensor-core-attention
// (--precision tf32, bf16) on heads the tensor-core kernels take (d and dv
// multiples of 16 up to 64): their dq does not read it; without it 0. A
// backward without such a forward, and the CPU's calls, pass zeros.
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg=kernels=cuda | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg | FileCheck %s --check-prefix=CPU
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg="kernels=cuda attention-ds=true" | FileCheck %s --check-prefix=DS
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg="kernels=cuda attention-ds=true tensor-core-attention=true" | FileCheck %s --check-prefix=TC

// Two heads of 3 queries: 6 rows of 4 floats. The forward's out goes to its
// own buffer, dense: outer stride 0, inner 12, row 4.
// CHECK-LABEL: func.func @forward_then_backward
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<2x3x4xf32>
// CHECK: %[[OUTP:.+]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[STATS:.+]] = memref.alloc() : memref<6x4xf32>
// CHECK: %[[STATSP:.+]] = memref.extract_aligned_pointer_as_index %[[STATS]]
// CHECK: call @tfc_cuda_attention_forward(
// CHECK-SAME: %[[OUTP]], %c0{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %[[STATSP]], %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: %[[O:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: %[[S:.+]] = bufferization.to_tensor %[[STATS]] restrict writable
// CHECK: %[[OB:.+]] = bufferization.to_memref %[[O]] read_only
// CHECK: %[[OBP:.+]] = memref.extract_aligned_pointer_as_index %[[OB]]
// CHECK: %[[SB:.+]] = bufferization.to_memref %[[S]] read_only
// CHECK: %[[SBP:.+]] = memref.extract_aligned_pointer_as_index %[[SB]]
// CHECK: call @tfc_cuda_attention_backward(
// CHECK-SAME: %[[OBP]], %c0{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %[[SBP]], %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK-LABEL: func.func private @tfc_cuda_attention_forward
// CHECK-SAME: (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CPU-LABEL: func.func @forward_then_backward
// CPU: call @tfc_attention_forward(
// CPU-SAME: %c4{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CPU: call @tfc_attention_backward(
// CPU-SAME: %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// Heads of 4: not the tensor-core kernels', so dS in f32 either way.
// DS-LABEL: func.func @forward_then_backward
// DS: %[[BUF:.+]] = memref.alloc() : memref<6x8xf32>
// DS: %[[BUFP:.+]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// DS: call @tfc_cuda_attention_backward(
// DS-SAME: , %[[BUFP]], %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// TC-LABEL: func.func @forward_then_backward
// TC-NOT: xi16>
// TC: memref.alloc() : memref<6x8xf32>
// TC: call @tfc_cuda_attention_backward(
func.func @forward_then_backward(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x4xf32>, %g: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) {
  %o = tf.attention %q, %k, %v scale 0.5 : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x4xf32>
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v grad %g scale 0.5 : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
  return %o, %dq, %dk, %dv : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
}

// -----

// The heads merged back after the forward (its out written into the
// reshape's [3, 8] buffer, head h at 4 h, rows 8 apart): the backward reads
// out there, through the same strides (outer 0, inner 4, row 8).
// CHECK-LABEL: func.func @merged_heads
// CHECK: %[[MERGED:.+]] = memref.alloc() : memref<3x8xf32>
// CHECK: %[[STATS:.+]] = memref.alloc() : memref<6x4xf32>
// CHECK: call @tfc_cuda_attention_forward(
// CHECK: %[[O:.+]] = bufferization.to_tensor %[[MERGED]] restrict writable
// CHECK: %[[S:.+]] = bufferization.to_tensor %[[STATS]] restrict writable
// CHECK: %[[OB:.+]] = bufferization.to_memref %[[O]] read_only
// CHECK: %[[OBP:.+]] = memref.extract_aligned_pointer_as_index %[[OB]]
// CHECK: call @tfc_cuda_attention_backward(
// CHECK-SAME: %[[OBP]], %c0{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %{{.+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: return %[[O]]
func.func @merged_heads(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x4xf32>, %g: tensor<2x3x4xf32>) -> (tensor<3x8xf32>, tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) {
  %o = tf.attention %q, %k, %v scale 0.5 : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x4xf32>
  %t = tf.transpose %o [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %m = tf.reshape %t : tensor<3x2x4xf32> to tensor<3x8xf32>
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v grad %g scale 0.5 : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
  return %m, %dq, %dk, %dv : tensor<3x8xf32>, tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
}

// -----

// A backward of other operands (here another scale) than the forward's:
// neither saves nor reads statistics.
// CHECK-LABEL: func.func @other_scale
// CHECK-NOT: memref<6x4xf32>
// CHECK: call @tfc_cuda_attention_forward(
// CHECK-SAME: %c4{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: call @tfc_cuda_attention_backward(
// CHECK-SAME: %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
func.func @other_scale(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x4xf32>, %g: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) {
  %o = tf.attention %q, %k, %v scale 0.5 : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x4xf32>
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v grad %g scale 0.25 : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
  return %o, %dq, %dk, %dv : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
}

// -----

// Heads of 16 (the tensor-core kernels'): room for dS, 2 heads x 3 queries
// of 5 keys rounded up to 8, as the last argument, f32, without
// tensor-core-attention; 0 with it (the tensor-core kernels take these
// heads) and without attention-ds.
// CHECK-LABEL: func.func @tensor_core_heads
// CHECK-NOT: xi16>
// CHECK: call @tfc_cuda_attention_backward(
// CHECK-SAME: , %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// DS-LABEL: func.func @tensor_core_heads
// DS-NOT: xi16>
// DS: memref.alloc() : memref<6x8xf32>
// DS: call @tfc_cuda_attention_backward(
// TC-LABEL: func.func @tensor_core_heads
// TC-NOT: memref<6x8x
// TC: call @tfc_cuda_attention_backward(
// TC-SAME: , %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
func.func @tensor_core_heads(%q: tensor<2x3x16xf32>, %k: tensor<2x5x16xf32>, %v: tensor<2x5x16xf32>, %g: tensor<2x3x16xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>) {
  %o = tf.attention %q, %k, %v scale 0.25 : tensor<2x3x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32> -> tensor<2x3x16xf32>
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v grad %g scale 0.25 : tensor<2x3x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>
  return %o, %dq, %dk, %dv : tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>
}
