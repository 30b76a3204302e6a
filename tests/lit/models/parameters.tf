# Learnable tensors, a tied table and constants, end to end on every target:
# the binary's manifest lists each parameter by its name with its
# initialiser and `init` draws it so (a tied table is one parameter, no
# layer's weight); one epoch trains on the CPU; --target=cuda-emulated
# agrees with the CPU build (tools/gpu/parity.py: predict, train_step,
# evaluate, and train_step twice the same bytes) and trains too.
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %s -o %t/cpu
# RUN: %t/cpu info | FileCheck %s --check-prefix=INFO
# RUN: %t/cpu init --seed 3 --out %t/p.safetensors
# RUN: %python %S/Inputs/params.py %t/cpu %t/p.safetensors | FileCheck %s --check-prefix=INIT
# RUN: %t/cpu train --epochs 1 --run-dir %t/run | FileCheck %s --check-prefix=TRAIN
# RUN: tfc compile %s --batch 4 -o %t/cpu4
# RUN: tfc compile %s --batch 4 --target=cuda-emulated -o %t/emulated4
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/cpu4 --cuda %t/emulated4 --work %t/parity --repeat | FileCheck %s --check-prefix=PARITY
# RUN: tfc compile %s --target=cuda-emulated -o %t/emulated
# RUN: %t/emulated train --epochs 1 --run-dir %t/run-emulated | FileCheck %s --check-prefix=TRAIN

# INFO: parameters:
# INFO-NEXT: wte wte[10, 16] 160
# INFO-NEXT: pos pos[8, 16] 128
# INFO-NEXT: mix mix[16, 16] 256
# INFO-NEXT: temperature temperature[] 1
# INFO-NEXT: encoder.0.self_attn.qkv weight[48, 16] bias[48] 816
# INFO-NEXT: encoder.0.self_attn.out weight[16, 16] bias[16] 272
# INFO-NEXT: encoder.0.norm1 weight[16] bias[16] 32
# INFO-NEXT: encoder.0.linear1 weight[32, 16] bias[32] 544
# INFO-NEXT: encoder.0.linear2 weight[16, 32] bias[16] 528
# INFO-NEXT: encoder.0.norm2 weight[16] bias[16] 32
# INFO-NEXT: total 2,769

# INIT: wte [10, 16] normal(0.5): min -{{[0-9.]+}} max {{[0-9.]+}} mean {{-?0\.0[0-9]+}} std 0.{{[45]}}
# INIT-NEXT: pos [8, 16] uniform(0.1): min -0.0{{[0-9]+}} max 0.0{{[0-9]+}} mean
# INIT-NEXT: mix [16, 16] zeros: min 0.0000 max 0.0000
# INIT-NEXT: temperature [] ones: min 1.0000 max 1.0000
# The encoder's matrices xavier: qkv [48, 16] within sqrt(6 / 64) = 0.306.
# INIT-NEXT: encoder.0.self_attn.qkv.weight [48, 16] uniform(0.306186): min -0.30{{[0-9]+}} max 0.30{{[0-9]+}}
# INIT-NEXT: encoder.0.self_attn.qkv.bias [48] zeros
# INIT-NEXT: encoder.0.self_attn.out.weight [16, 16] uniform(0.433013)
# INIT: encoder.0.linear1.weight [32, 16] uniform(0.353553)
# Biases keep PyTorch's default, 1 / sqrt(16):
# INIT-NEXT: encoder.0.linear1.bias [32] uniform(0.25)

# TRAIN: epoch 1/1  train: loss {{[0-9.]+}}  accuracy
# TRAIN: test (best checkpoint): loss

# PARITY-COUNT-4: PASS tied {{.*}}
# PARITY-NOT: FAIL

model tied {
  param classes = 10
  param seq = 8
  param dim = 16

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let wte = parameter([classes, dim], init: normal(0.5), name: "wte")
  let pos = parameter([seq, dim], init: uniform(0.1), name: "pos")
  let mix = parameter([dim, dim], init: zeros, name: "mix")       # starts as the identity map
  let temperature = parameter([], init: ones, name: "temperature", decay: false)
  let x = embedding(tokens, classes, dim, table: wte) + pos
  x = x @ (eye(dim) + mix) + full([seq, dim], 0.01) * float(unsqueeze(arange(seq), 1))
  x = encoder(x, layers: 1, heads: 2, ffn: 32, init: xavier)
  let logits = linear(x, classes, weight: wte, bias: false) * temperature
  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}

train tied {
  data reverse_sequences(classes: 10, seq: 8, train: 2000, val: 200, test: 200)
  batch 50
  epochs 1
  optimizer adamw(lr: 3e-3)
  seed 1
}
