# Constant tensors: zeros(shape), ones(shape), full(shape, value) are one
# scalar tf.constant broadcast (a splat, whatever the size); arange(n),
# arange(start, limit) (i32) and eye(n) (f32) are dense constants, at most
# 2^26 elements. dtype: "f32", "i32" or "bool" where it makes sense.
# (`param` constants, compile-time numbers, are in constants.tf.)
# RUN: tfc compile %s --model constants --emit=mlir | FileCheck %s
# RUN: not tfc compile %s --model dtype 2>&1 | FileCheck %s --check-prefix=DTYPE
# RUN: not tfc compile %s --model huge 2>&1 | FileCheck %s --check-prefix=HUGE
# RUN: not tfc compile %s --model empty_range 2>&1 | FileCheck %s --check-prefix=RANGE
# RUN: not tfc compile %s --model long_range 2>&1 | FileCheck %s --check-prefix=LONG
# RUN: not tfc compile %s --model big_eye 2>&1 | FileCheck %s --check-prefix=EYE
# RUN: not tfc compile %s --model not_i32 2>&1 | FileCheck %s --check-prefix=NOTI32
# RUN: not tfc compile %s --model not_bool 2>&1 | FileCheck %s --check-prefix=NOTBOOL
# RUN: not tfc compile %s --model bool_range 2>&1 | FileCheck %s --check-prefix=BOOLRANGE

# CHECK-LABEL: func.func @constants
# CHECK: %[[Z:.+]] = tf.constant dense<0.000000e+00> : tensor<f32>
# CHECK: tf.broadcast_in_dim %[[Z]] [] : tensor<f32> to tensor<2x3xf32>
# CHECK: %[[BIG:.+]] = tf.constant dense<0.000000e+00> : tensor<f32>
# CHECK: tf.broadcast_in_dim %[[BIG]] [] : tensor<f32> to tensor<4096x4096xf32>
# CHECK: %[[O:.+]] = tf.constant dense<1> : tensor<i32>
# CHECK: tf.broadcast_in_dim %[[O]] [] : tensor<i32> to tensor<4xi32>
# CHECK: %[[F:.+]] = tf.constant dense<-2.500000e+00> : tensor<f32>
# CHECK: tf.broadcast_in_dim %[[F]] [] : tensor<f32> to tensor<2x2xf32>
# CHECK: %[[T:.+]] = tf.constant dense<true> : tensor<i1>
# CHECK: tf.broadcast_in_dim %[[T]] [] : tensor<i1> to tensor<3xi1>
# CHECK: tf.constant dense<7> : tensor<i32>
# CHECK: tf.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
# CHECK: tf.constant dense<[-2, -1, 0, 1]> : tensor<4xi32>
# CHECK: tf.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
# CHECK: tf.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
# CHECK: tf.constant dense<{{\[\[}}true, false, false], [false, true, false], [false, false, true]]> : tensor<3x3xi1>
# CHECK: return
model constants {
  input x: f32[2, 3]
  output a = x + zeros([2, 3])
  output big = sum(zeros([4096, 4096]))
  output b = ones(4, dtype: "i32")
  output c = full([2, 2], -2.5)
  output d = full(3, true)
  output e = full([], 7, dtype: "i32")
  output f = arange(4)
  output g = arange(-2, 2)
  output h = arange(3, dtype: "f32")
  output i = eye(2)
  output j = eye(3, dtype: "bool")
}

model dtype {
  # DTYPE: tensor-constants.tf:[[@LINE+1]]:32: error: argument 'dtype' of 'zeros' must be "f32", "i32" or "bool", got "f64"
  output z = zeros([2], dtype: "f64")
}

model huge {
  # HUGE: tensor-constants.tf:[[@LINE+1]]:14: error: ones: shape [65536, 65536, 4]: dimensions must be positive and the size at most 2^31 elements
  output o = ones([65536, 65536, 4])
}

model empty_range {
  # RANGE: tensor-constants.tf:[[@LINE+1]]:14: error: arange(5, 2) needs start < limit and at most 2^26 values
  output r = arange(5, 2)
}

model long_range {
  # LONG: tensor-constants.tf:[[@LINE+1]]:14: error: arange(0, 100000000) needs start < limit and at most 2^26 values
  output r = arange(100000000)
}

model big_eye {
  # EYE: tensor-constants.tf:[[@LINE+1]]:14: error: eye(100000) needs a size in [1, 8192]
  output e = eye(100000)
}

model not_i32 {
  # NOTI32: tensor-constants.tf:[[@LINE+1]]:14: error: full: 2.5 is not an i32 (an integer in [-2^31, 2^31))
  output f = full([2], 2.5, dtype: "i32")
}

model not_bool {
  # NOTBOOL: tensor-constants.tf:[[@LINE+1]]:14: error: full: a bool tensor holds 0 or 1 (false or true), got 2
  output f = full([2], 2, dtype: "bool")
}

model bool_range {
  # BOOLRANGE: tensor-constants.tf:[[@LINE+1]]:14: error: arange makes i32 or f32 values, not bool
  output r = arange(3, dtype: "bool")
}
