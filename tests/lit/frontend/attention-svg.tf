# `MODEL attention`: every attention map of one sample as an SVG grid, layers
# by rows and heads by columns, the sample's tokens as tick labels.
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %s --batch 2 --attention-maps -o %t/m
# RUN: %t/m init --seed 3 --out %t/p.safetensors
# RUN: %python %S/Inputs/write_tokens.py %t/tokens.npy 2 4 7 3 2 9 1 5 0
# RUN: %t/m attention --checkpoint %t/p.safetensors --input tokens=%t/tokens.npy --sample 1 --svg %t/maps.svg | FileCheck %s --check-prefix=OUT
# RUN: FileCheck %s --input-file=%t/maps.svg
# A binary built without --attention-maps says how to get them:
# RUN: tfc compile %s --batch 2 -o %t/plain
# RUN: not %t/plain attention --checkpoint %t/p.safetensors --input tokens=%t/tokens.npy --svg %t/x.svg 2>&1 | FileCheck %s --check-prefix=NOMAPS
# A sample outside the input is an error, and nothing is written:
# RUN: not %t/m attention --checkpoint %t/p.safetensors --input tokens=%t/tokens.npy --sample 5 --svg %t/bad.svg 2>&1 | FileCheck %s --check-prefix=BADSAMPLE
# RUN: not test -e %t/bad.svg

model m {
  input tokens: i32[batch, 4]
  let x = linear(one_hot(tokens, 10), 8, name: "embed")
  x = encoder(x, layers: 2, heads: 2, ffn: 16)
  output y = x
}

# OUT: wrote {{.*}}maps.svg (2 layers x 2 heads)
# CHECK: <svg
# CHECK: <title>m: attention maps of sample 1</title>
# CHECK: Layer 1, Head 1
# Sample 1 is the tokens 9 1 5 0: they label both axes.
# CHECK: class="ylabel"{{.*}}>9</text>
# CHECK: class="ylabel"{{.*}}>1</text>
# CHECK: class="ylabel"{{.*}}>5</text>
# CHECK: class="ylabel"{{.*}}>0</text>
# CHECK: class="xlabel"{{.*}}>9</text>
# CHECK: Layer 1, Head 2
# CHECK: Layer 2, Head 1
# CHECK: Layer 2, Head 2
# CHECK-NOT: Layer 3
# CHECK: </svg>
# NOMAPS: attention maps
# NOMAPS-SAME: --attention-maps
# BADSAMPLE: sample
