# Which validation score picks best.safetensors: the train block's `best`
# (a name: the loss lower-better, a metric higher-better; min(NAME), max(NAME)
# say which way), else the first metric, else the loss; `train --best`
# overrides it. max(loss) picks the first epoch of two (the loss falls).
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %s -o %t/m
# RUN: %t/m train --run-dir %t/a | FileCheck %s --check-prefix=MAXLOSS
# RUN: %t/m train --run-dir %t/b --best min:loss | FileCheck %s --check-prefix=MINLOSS
# RUN: not %t/m train --run-dir %t/c --best acuracy 2>&1 | FileCheck %s --check-prefix=FLAG
# RUN: sed 's/best max(loss)/best acuracy/' %s > %t/bad.tf
# RUN: not tfc compile %t/bad.tf -o %t/bad 2>&1 | FileCheck %s --check-prefix=BLOCK
# MAXLOSS: epoch 1/2  train: {{.*}}(best)
# MAXLOSS: epoch 2/2  train: {{[^(]*}}[0:
# MINLOSS: epoch 1/2  train: {{.*}}(best)
# MINLOSS: epoch 2/2  train: {{.*}}(best)
# FLAG: error: --best 'acuracy': 'acuracy' is neither the loss nor a metric (known: loss, accuracy)
# BLOCK: error: train block: best 'acuracy' is neither the loss nor a metric; did you mean 'accuracy'? (known: loss, accuracy)
model reverse {
  param classes = 10
  param seq = 8
  param dim = 16

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let logits = linear(relu(linear(one_hot(tokens, classes), dim)), classes, name: "output")
  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
}

train reverse {
  data reverse_sequences(classes: 10, seq: 8, train: 2000, val: 500, test: 500)
  batch 100
  epochs 2
  optimizer adam(lr: 1e-2)
  seed 1
  best max(loss)
}
