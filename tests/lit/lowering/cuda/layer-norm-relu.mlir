// relu(layer_norm(x)) and relu's gradient on the layer norm's kernels
// (kernels=cuda): a tf.relu that is a layer norm's only user becomes the
// forward call's relu flag (its eighth argument, 1; the ninth, y16, is 0, and so
// is the tenth, no residual sum); an adjoint of
// tf.layer_norm_grad that is relu's gradient, select(m > 0, a, +0), behind
// reshapes and read by nothing else, becomes the backward call's gate (the
// argument after the adjoint: m's pointer, else 0) and the select goes, at
// the function's level or as a fusion's yield. Anything else is left as it
// was: the same bits either way (cuda-kernels.md).
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg=kernels=cuda | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @relu_after
// CHECK: %[[Y:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[YP:.+]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: %[[ON:.+]] = arith.constant 1 : index
// CHECK: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[YP]], %[[ON]], %c0{{(_[0-9]+)?}}, %c0
// CHECK-NOT: linalg.generic
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[Y]]
// CHECK: return %[[T]]
func.func @relu_after(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tf.layer_norm %x, %g, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = tf.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// The norm's output read elsewhere too: the relu stays a loop.
// CHECK-LABEL: func.func @norm_read_twice
// CHECK: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @norm_read_twice(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tf.layer_norm %x, %g, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = tf.relu %0 : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A GEMM's epilogue masks the product (a relu's gradient after a linear
// layer): the GEMM keeps the product alone, the kernel the mask.
// CHECK-LABEL: func.func @gemm_epilogue
// CHECK-SAME: %[[M:[^:]+]]: tensor<8x8xf32>
// CHECK-NOT: arith.cmpf
// CHECK: linalg.generic {{.+}} attrs = {tfc.matmul}
// CHECK-NOT: arith.cmpf
// CHECK: %[[MM:.+]] = bufferization.to_memref %[[M]]
// CHECK: %[[MP:.+]] = memref.extract_aligned_pointer_as_index %[[MM]]
// CHECK: call @tfc_cuda_layer_norm_backward(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[MP]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CPU-LABEL: func.func @gemm_epilogue
// CPU: arith.cmpf ogt
// CPU: call @tfc_layer_norm_backward(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0{{(_[0-9]+)?}},
func.func @gemm_epilogue(%x: tensor<2x4x8xf32>, %gamma: tensor<8xf32>, %m: tensor<8x8xf32>, %dout: tensor<8x3xf32>, %w: tensor<3x8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = tf.constant dense<0.0> : tensor<8x8xf32>
  %0 = tf.fusion "gemm" : tensor<8x8xf32> {
    %p = tf.matmul %dout, %w : tensor<8x3xf32>, tensor<3x8xf32> -> tensor<8x8xf32>
    %c = tf.compare gt, %m, %zero : tensor<8x8xf32>
    %s = tf.select %c, %p, %zero : tensor<8x8xi1>, tensor<8x8xf32>
    tf.yield %s : tensor<8x8xf32>
  }
  %1 = tf.reshape %0 : tensor<8x8xf32> to tensor<2x4x8xf32>
  %dx, %dgamma, %dbeta = tf.layer_norm_grad %x, %gamma grad %1 : tensor<2x4x8xf32>, tensor<8xf32>
  return %dx, %dgamma, %dbeta : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// The select at the function's level; its comparison read elsewhere stays.
// CHECK-LABEL: func.func @function_level
// CHECK-SAME: tensor<8xf32>, %[[M:[^:]+]]: tensor<4x8xf32>
// CHECK: arith.cmpf ogt
// CHECK-NOT: arith.select
// CHECK: %[[MM:.+]] = bufferization.to_memref %[[M]]
// CHECK: %[[MP:.+]] = memref.extract_aligned_pointer_as_index %[[MM]]
// CHECK: call @tfc_cuda_layer_norm_backward(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[MP]],
func.func @function_level(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>, %m: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xi1>) {
  %zero = tf.constant dense<0.0> : tensor<4x8xf32>
  %c = tf.compare gt, %m, %zero : tensor<4x8xf32>
  %s = tf.select %c, %a, %zero : tensor<4x8xi1>, tensor<4x8xf32>
  %dx, %dgamma, %dbeta = tf.layer_norm_grad %x, %gamma grad %s : tensor<4x8xf32>, tensor<8xf32>
  return %dx, %dgamma, %dbeta, %c : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xi1>
}

// -----

// Not relu's gradient, or its adjoint read elsewhere: no gate, the select
// stays (a -0 where the mask is off, a comparison but >, another value than
// 0, the masked adjoint returned too).
// CHECK-LABEL: func.func @not_gates
// CHECK-COUNT-4: call @tfc_cuda_layer_norm_backward(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0{{(_[0-9]+)?}},
func.func @not_gates(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>, %m: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = tf.constant dense<0.0> : tensor<4x8xf32>
  %negzero = tf.constant dense<-0.0> : tensor<4x8xf32>
  %one = tf.constant dense<1.0> : tensor<4x8xf32>
  %gt = tf.compare gt, %m, %zero : tensor<4x8xf32>
  %ge = tf.compare ge, %m, %zero : tensor<4x8xf32>
  %s0 = tf.select %gt, %a, %negzero : tensor<4x8xi1>, tensor<4x8xf32>
  %dx0, %dg0, %db0 = tf.layer_norm_grad %x, %gamma grad %s0 : tensor<4x8xf32>, tensor<8xf32>
  %s1 = tf.select %ge, %a, %zero : tensor<4x8xi1>, tensor<4x8xf32>
  %dx1, %dg1, %db1 = tf.layer_norm_grad %x, %gamma grad %s1 : tensor<4x8xf32>, tensor<8xf32>
  %s2 = tf.select %gt, %a, %one : tensor<4x8xi1>, tensor<4x8xf32>
  %dx2, %dg2, %db2 = tf.layer_norm_grad %x, %gamma grad %s2 : tensor<4x8xf32>, tensor<8xf32>
  %s3 = tf.select %gt, %a, %zero : tensor<4x8xi1>, tensor<4x8xf32>
  %dx3, %dg3, %db3 = tf.layer_norm_grad %x, %gamma grad %s3 : tensor<4x8xf32>, tensor<8xf32>
  return %dx0, %dx1, %dx2, %dx3, %s3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
