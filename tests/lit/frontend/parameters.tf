# parameter(shape, init:, name:, decay:): a learnable tensor of any rank,
# named `name` in its scope (a def's call), `parameter`, `parameter_1`, ...
# when unnamed; its initialiser is a tf.init, xavier and kaiming computed
# from torch's fan-in and fan-out (the dims after the first two are the
# receptive field); decay: is an explicit tf.decay.
# RUN: tfc compile %s --model vit --emit=mlir | FileCheck %s
# RUN: tfc compile %s --model vit -o %t && %t info | FileCheck %s --check-prefix=INFO
# RUN: not tfc compile %s --model vector_xavier 2>&1 | FileCheck %s --check-prefix=VECTOR
# RUN: not tfc compile %s --model twice 2>&1 | FileCheck %s --check-prefix=TWICE
# RUN: not tfc compile %s --model shape 2>&1 | FileCheck %s --check-prefix=SHAPE
# RUN: not tfc compile %s --model std 2>&1 | FileCheck %s --check-prefix=STD

# CHECK-LABEL: func.func @vit(
# CHECK-SAME: tensor<2x4x8xf32> {tf.input = "patches"}
# CHECK-SAME: tensor<1x1x8xf32> {tf.init = #tf.init<normal, 2.000000e-02>, tf.param = "cls"}
# CHECK-SAME: tensor<5x8xf32> {tf.init = #tf.init<uniform, 1.000000e-01>, tf.param = "pos"}
# CHECK-SAME: tensor<f32> {tf.decay = false, tf.init = #tf.init<ones>, tf.param = "parameter"}
# CHECK-SAME: tensor<8xf32> {tf.init = #tf.init<zeros>, tf.param = "parameter_1"}
# sqrt(6 / (8 + 8)) and 1 / sqrt(8):
# CHECK-SAME: tensor<8x8xf32> {tf.decay = true, tf.init = #tf.init<uniform, 0.61237243569579447>, tf.param = "head.w"}
# CHECK-SAME: tensor<8x8xf32> {tf.decay = true, tf.init = #tf.init<uniform, 0.35355339059327373>, tf.param = "head_1.w"}
# A [4, 2, 3] kernel: fan_in 2 * 3, fan_out 4 * 3; sqrt(6 / 18) and 1 / sqrt(6):
# CHECK-SAME: tensor<4x2x3xf32> {tf.init = #tf.init<uniform, 0.57735026918962573>, tf.param = "k_xavier"}
# CHECK-SAME: tensor<4x2x3xf32> {tf.init = #tf.init<uniform, 0.40824829046386307>, tf.param = "k_kaiming"}
# CHECK-SAME: tensor<3xf32> {tf.init = #tf.init<normal, 1.000000e+00>, tf.param = "parameter_2"}
# CHECK: tf.concat
# INFO: parameters:
# INFO-NEXT: cls cls[1, 1, 8] 8
# INFO-NEXT: pos pos[5, 8] 40
# INFO-NEXT: parameter parameter[] 1
# INFO-NEXT: parameter_1 parameter_1[8] 8
# INFO-NEXT: head w[8, 8] 64
# INFO-NEXT: head_1 w[8, 8] 64
def head(x, init) {
  let w = parameter([8, 8], init: init, name: "w", decay: true)
  return x @ w
}

model vit {
  input patches: f32[2, 4, 8]
  let cls = parameter([1, 1, 8], init: normal(0.02), name: "cls")
  let pos = parameter([5, 8], init: uniform(0.1), name: "pos")
  let scale = parameter([], init: ones, decay: false)
  let shift = parameter(8)
  let x = concat([cls + zeros([2, 1, 8]), patches], axis: 1) + pos
  x = x * scale + shift
  x = head(x, xavier)
  x = head(x, kaiming)
  let kx = parameter([4, 2, 3], init: xavier, name: "k_xavier")
  let kk = parameter([4, 2, 3], init: kaiming, name: "k_kaiming")
  let v = parameter([3], init: normal(1))
  output y = x
  output k = kx + kk + v
}

model vector_xavier {
  # VECTOR: parameters.tf:[[@LINE+1]]:11: error: parameter 'gain' has shape [8]: xavier needs a fan-in and a fan-out, so a rank of at least 2 (as in PyTorch); use normal(std) or uniform(bound)
  let g = parameter(8, init: xavier, name: "gain")
  output g
}

model twice {
  let a = parameter([2], name: "a")
  # TWICE: parameters.tf:[[@LINE+1]]:11: error: parameter 'a' is defined twice (give one of the layers a different name:)
  let b = parameter([2], name: "a")
  output c = a + b
}

model shape {
  # SHAPE: parameters.tf:[[@LINE+1]]:11: error: parameter 'parameter' has shape [3, 0]: dimensions must be positive and the size at most 2^31 elements
  let p = parameter([3, 0])
  output p
}

model std {
  # STD: parameters.tf:[[@LINE+1]]:30: error: normal(0): the std must be positive (zeros draws nothing)
  let p = parameter(3, init: normal(0))
  output p
}
