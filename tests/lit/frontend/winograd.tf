# Convolutions of 5 taps over 16 channels or more run by Winograd's minimal
# filtering: F(4, 5) forward and for the input gradient, F(5, 4) for the
# weight gradient; the first layer (one input channel) and the last (one
# output channel) stay GEMMs over their windows. --no-winograd keeps them all
# GEMMs.
# RUN: tfc compile %s --emit=buffers -o - | FileCheck %s
# RUN: tfc compile %s --emit=buffers --no-winograd -o - | FileCheck %s --check-prefix=DIRECT

model convs {
  input x: f32[batch, 1, 40]
  input y: f32[batch, 1, 40]
  let h = relu(conv1d(x, 16, kernel: 5, padding: 2))
  h = relu(conv1d(h, 16, kernel: 5, padding: 2))
  let p = conv1d(h, 1, kernel: 5, padding: 2)
  loss mse(p, y)
  output p
}

train convs {
  batch 4
  optimizer sgd(lr: 0.1)
}

# The train step: layer 1 forward, layer 2 forward (F(4, 5)), layer 3
# forward; layer 3's weight gradient (one output channel) and input gradient
# (16 outputs from its 1 channel); layer 2's
# weight gradient (F(5, 4)) and input gradient (F(4, 5)); layer 1's weight
# gradient (one input channel).
# CHECK-LABEL: func.func @tfc_entry_train_step
# CHECK: call @tfc_sgemm_windows(
# CHECK: call @tfc_conv1d_winograd(
# CHECK: call @tfc_sgemm_windows(
# CHECK: call @tfc_sgemm_taps(
# CHECK: call @tfc_sgemm_windows(
# CHECK: call @tfc_conv1d_winograd_taps(
# CHECK: call @tfc_conv1d_winograd(
# CHECK: call @tfc_sgemm_taps(
# CHECK-LABEL: func.func @tfc_entry_predict
# CHECK: call @tfc_sgemm_windows(
# CHECK: call @tfc_conv1d_winograd(
# CHECK: call @tfc_sgemm_windows(

# DIRECT-NOT: tfc_conv1d_winograd
# DIRECT-LABEL: func.func @tfc_entry_train_step
# DIRECT-COUNT-3: call @tfc_sgemm_windows(
# DIRECT: call @tfc_sgemm_taps(
# DIRECT: call @tfc_sgemm_windows(
# DIRECT: call @tfc_sgemm_taps(
# DIRECT: call @tfc_sgemm_windows(
# DIRECT: call @tfc_sgemm_taps(
# DIRECT-NOT: tfc_conv1d_winograd
