# The examples of real models in models/ (issue 29) compile, train an epoch on
# a little of their data, and the GPT generates: gpt_bytes (tied embedding,
# learned positions, generate), bert_masked (ignore_index, a masked metric),
# vit (patches, a class token and positions as parameter()). Their full
# trainings are in docs/examples.md.
# RUN: rm -rf %t && mkdir -p %t
# RUN: sed 's/data text_bytes(seq: 128)/data text_bytes(seq: 128, train: 64, val: 8, test: 8)/' %models/gpt_bytes.tf > %t/gpt_bytes.tf
# RUN: tfc compile %t/gpt_bytes.tf -o %t/gpt_bytes
# RUN: %t/gpt_bytes train --epochs 1 --run-dir %t/gpt | FileCheck %s --check-prefix=GPT
# RUN: %t/gpt_bytes generate --params %t/gpt/best.safetensors --prompt "The " --max-new-tokens 9 --seed 2 --output %t/tokens.npy 2>&1 | FileCheck %s --check-prefix=GENERATE
# RUN: sed 's/train: 20000, val: 1000, test: 1000/train: 256, val: 64, test: 64/' %models/bert_masked.tf > %t/bert_masked.tf
# RUN: tfc compile %t/bert_masked.tf -o %t/bert_masked
# RUN: %t/bert_masked train --epochs 1 --run-dir %t/bert | FileCheck %s --check-prefix=BERT
# RUN: sed 's/train: 10000, val: 1000, test: 1000/train: 256, val: 64, test: 64/' %models/vit.tf > %t/vit.tf
# RUN: tfc compile %t/vit.tf -o %t/vit
# RUN: %t/vit train --epochs 1 --run-dir %t/vit-run | FileCheck %s --check-prefix=VIT

# GPT: epoch 1/1  train: loss {{[0-9.]+}}  bits_per_byte {{[0-9.]+}}  |  val: loss {{[0-9.]+}}  bits_per_byte {{[0-9.]+}}  (best)
# GPT: test (best checkpoint): loss {{[0-9.]+}}  bits_per_byte
# GENERATE: The {{.*}}
# GENERATE: generated 9 tokens in {{[0-9.]+}} s: {{[0-9.]+}} tokens/s (prefill of 4 tokens
# BERT: epoch 1/1  train: loss {{[0-9.]+}}  masked_accuracy {{[0-9.]+}}  |  val: loss {{[0-9.]+}}  masked_accuracy
# VIT: epoch 1/1  train: loss {{[0-9.]+}}  accuracy {{[0-9.]+}}  |  val: loss {{[0-9.]+}}  accuracy
