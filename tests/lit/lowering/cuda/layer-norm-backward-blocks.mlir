// tf.layer_norm_grad's blocks of rows (each block's dgamma and dbeta sums
// go to scratch, 2 x blocks x d floats, the call's last argument): 16 rows
// a block on the GPU (kernels=cuda; more blocks to fill it), 64 on the CPU.
// 64 rows of 8: 4 blocks (scratch of 64 floats) against 1 (16 floats).
// RUN: tf-opt %s --tf-lower-to-linalg=kernels=cuda | FileCheck %s
// RUN: tf-opt %s --tf-lower-to-linalg | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @blocks
// CHECK-DAG: %[[ROWS:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[BLOCK:.+]] = arith.constant 16 : index
// CHECK: %[[SCRATCH:.+]] = memref.alloc() {{.*}}: memref<64xf32>
// CHECK: %[[SP:.+]] = memref.extract_aligned_pointer_as_index %[[SCRATCH]]
// CHECK: call @tfc_cuda_layer_norm_backward(%[[ROWS]], %{{.+}}, %[[BLOCK]], {{.+}}, %[[SP]], 
// CPU-LABEL: func.func @blocks
// CPU-DAG: %[[ROWS:.+]] = arith.constant 64 : index
// CPU: %[[SCRATCH:.+]] = memref.alloc() {{.*}}: memref<16xf32>
// CPU: %[[SP:.+]] = memref.extract_aligned_pointer_as_index %[[SCRATCH]]
// CPU: call @tfc_layer_norm_backward(%[[ROWS]], %{{.+}}, %c64{{(_[0-9]+)?}}, {{.+}}, %[[SP]], 
func.func @blocks(%x: tensor<64x8xf32>, %gamma: tensor<8xf32>, %g: tensor<64x8xf32>) -> (tensor<64x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dgamma, %dbeta = tf.layer_norm_grad %x, %gamma grad %g : tensor<64x8xf32>, tensor<8xf32>
  return %dx, %dgamma, %dbeta : tensor<64x8xf32>, tensor<8xf32>, tensor<8xf32>
}
