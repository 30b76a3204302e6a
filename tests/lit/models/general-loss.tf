# A loss and metrics of any scalar arithmetic over batch reductions: the
# evaluation masks each reduction to the real samples of a last partial
# batch, so batches of 48 (1,000 = 20 x 48 + 40) and of 100 score the same
# parameters alike where a score is a mean or a sum of multiples of means
# (the loss, accuracy). A ratio of sums (the masked mean `odd`) is averaged
# over batches: it is only close. A metric that divides by a count that is 0
# stays finite (`rare`).
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %s --batch 48 -o %t/m48 && tfc compile %s --batch 100 -o %t/m100
# RUN: %t/m48 init --out %t/p.safetensors
# RUN: %t/m48 eval --checkpoint %t/p.safetensors > %t/scores
# RUN: %t/m100 eval --checkpoint %t/p.safetensors >> %t/scores
# RUN: FileCheck %s < %t/scores
# A training epoch runs with it (the gradient of the whole expression).
# RUN: %t/m100 train --epochs 1 --run-dir %t/run | FileCheck %s --check-prefix=TRAIN
# CHECK: val (1000 samples): loss [[LOSS:[0-9.]+]]  odd {{[0-9.]+}}  accuracy [[ACC:[0-9.]+]]  rare 0.0000
# CHECK: test (1000 samples): loss [[TLOSS:[0-9.]+]]
# CHECK: val (1000 samples): loss [[LOSS]]  odd {{[0-9.]+}}  accuracy [[ACC]]  rare 0.0000
# CHECK: test (1000 samples): loss [[TLOSS]]
# TRAIN: epoch 1/1  train: loss {{[0-9.]+}}
model reverse {
  param classes = 10
  param seq = 8
  param dim = 16

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let logits = linear(relu(linear(one_hot(tokens, classes), dim)), classes, name: "output")
  let ce = -sum(log_softmax(logits) * one_hot(labels, classes), axis: -1)
  let odd = float(labels == 1) + float(labels == 3) + float(labels == 5)
  loss mean(ce) + 0.5 * mean(logits * logits) * 0.01
  metric odd = sum(ce * odd) / maximum(sum(odd), 1.0)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  metric rare = sum(float(labels == 11)) / maximum(sum(float(labels == 11)), 1.0)
  output logits
}

train reverse {
  data reverse_sequences(classes: 10, seq: 8, train: 1000, val: 1000, test: 1000)
  batch 100
  epochs 1
  optimizer adam(lr: 5e-3)
  seed 1
}
