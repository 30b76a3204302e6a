# Dropout where its masks decide every bit of a train step: on an input and
# after a GEMM's bias and relu (tf-fuse's GEMM epilogue, run on blocks of
# rows), over sizes (3 x 5 x 13 = 195, 3 x 5 x 9 = 135) that groups of four
# elements straddle rows of and end in a partial group. No attention or
# layer norm, so builds with and without the runtime's kernels differ only in
# who draws the masks (NoRuntimeKernelsTest).
model dropout_masks {
  input x: f32[batch, 5, 13]
  input y: f32[batch, 5, 9]
  let h = relu(linear(dropout(x, 0.3), 9, name: "a"))
  let p = linear(dropout(h, 0.5), 9, name: "b")
  loss mse(p, y)
  output p
}

train dropout_masks {
  batch 3
  optimizer sgd(lr: 0.1)
  seed 1
}
