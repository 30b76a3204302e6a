# Long rows on the CUDA backend (tf-split-reductions): 8,192 positions, each
# a row of 1,000 classes. Their argmax (the accuracy; an output whose rows
# tie, so the first best index must win) and the masked loss's row max and
# sum of exp (evaluate) are read a lane a column, 40 lanes of 25, then each
# row's 40 partials in order. Checked like every seed model: compiled with
# --target=cuda-emulated against the CPU build (tools/gpu/parity.py).
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %s --target=cuda --emit=gpu -o %t/gpu.mlir
# RUN: FileCheck %s --check-prefix=GPU < %t/gpu.mlir
# GPU: memref<32x256x25x40xf32>
# RUN: tfc compile %s -o %t/cpu
# RUN: tfc compile %s --target=cuda-emulated -o %t/emulated
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/cpu --cuda %t/emulated --work %t/w --repeat | FileCheck %s
# CHECK-COUNT-4: PASS {{.*}}
# CHECK-NOT: FAIL

model long_rows {
  param classes = 1000
  param seq = 256
  param dim = 8

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let x = relu(linear(one_hot(tokens, classes), dim, name: "input_net"))
  let logits = linear(x, classes, name: "output")

  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
  # Ties: the first class above 0.35 (mostly past the first 40 with
  # parity.py's parameters, so lanes must be ordered by index, not by lane).
  output first_above = argmax(float(logits > 0.35), axis: -1)
}

train long_rows {
  data reverse_sequences(classes: 1000, seq: 256, train: 64, val: 32, test: 32)
  batch 32
  epochs 1
  optimizer adam(lr: 1e-3)
}
