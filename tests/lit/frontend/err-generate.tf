# What `generate` cannot build says why, at the line to change.
# RUN: not tfc compile %s --emit=mlir 2>&1 | FileCheck %s --check-prefix=CAUSAL
# RUN: sed 's/, norm: "pre")/, norm: "pre", mask: causal_mask(6))/; s/^  generate logits from tokens$/  generate logits from float(tokens)/' %s > %t.input.tf
# RUN: not tfc compile %t.input.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=INPUT
# RUN: sed 's/, norm: "pre")/, norm: "pre", mask: causal_mask(6))/; s/^  generate logits from tokens$/  generate mean(logits, axis: -1) from tokens/' %s > %t.shape.tf
# RUN: not tfc compile %t.shape.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=SHAPE
# RUN: sed 's/, norm: "pre")/, norm: "pre", mask: causal_mask(6))/; s/^  generate logits from tokens$/  generate logits from tokens\n  generate logits from tokens/' %s > %t.twice.tf
# RUN: not tfc compile %t.twice.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=TWICE
# RUN: sed 's/^  generate logits from tokens$/  generate logits tokens/' %s > %t.from.tf
# RUN: not tfc compile %t.from.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=FROM
# RUN: sed 's/, norm: "pre")/, norm: "pre", mask: causal_mask(6))/; s/^  let logits = linear(x, 11)$/  let logits = linear(decoder(x, x, heads: 2, mask: causal_mask(6)), 11)/' %s > %t.cross.tf
# RUN: not tfc compile %t.cross.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=CROSS

# CAUSAL: error: generate: self-attention 'encoder.0.self_attn' must be causal to generate one token at a time: give it mask: causal_mask(seq) (directly)
# CAUSAL: note: in the prefill that `generate` builds from the model's code (batch 1)
# INPUT: error: generate: the tokens must be a model input i32[batch, seq], not a computed tensor
# SHAPE: error: generate: the logits must be f32[batch, seq, vocab], a score of every token at every position of the tokens [2, 6], got [2, 6]
# TWICE: error: a model generates from one input: `generate` is declared twice
# FROM: error: expected 'from' and the input of tokens after what generate scores ('generate logits from tokens'), got a name
# CROSS: error: generate: a generating model reads only its tokens, but 'decoder.0.cross_attn' attends to a memory (cross-attention)

model lm {
  input tokens: i32[2, 6]
  let x = embedding(tokens, 11, 8)
  x = encoder(x, heads: 2, norm: "pre")
  let logits = linear(x, 11)
  output logits
  generate logits from tokens
}
