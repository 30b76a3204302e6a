# A ViT-style image classifier (issue 29's example): 16x16 images cut into
# 4x4 patches, a learned class token and learned positions, two pre-norm
# blocks of self-attention, classified from the class token. The images are
# synthetic_images (bars, crosses, squares, rings... in noise).
model vit {
  param size = 16
  param patch = 4
  param grid = 4          # size / patch
  param channels = 1
  param dim = 64
  param classes = 6

  input images: f32[batch, channels, size, size]
  input labels: i32[batch]

  # [B, C, H, W] -> [B, patches, C * patch * patch], row-major patches.
  let p = reshape(images, [batch, channels, grid, patch, grid, patch])
  p = transpose(p, [0, 2, 4, 1, 3, 5])
  p = reshape(p, [batch, grid * grid, channels * patch * patch])
  let x = linear(p, dim, name: "patch_embed")

  let cls = parameter([1, 1, dim], init: normal(0.02), name: "cls_token", decay: false)
  x = concat([broadcast_to(cls, [batch, 1, dim]), x], axis: 1)
  x = x + parameter([grid * grid + 1, dim], init: normal(0.02), name: "pos_embed",
                    decay: false)
  x = encoder(x, layers: 2, heads: 4, ffn: 2 * dim, norm: "pre", activation: "gelu")
  let logits = linear(squeeze(slice(x, 1, 0, 1), 1), classes, name: "head")

  loss cross_entropy(logits, labels, label_smoothing: 0.1)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}

train vit {
  data synthetic_images(classes: 6, train: 10000, val: 1000, test: 1000)
  batch 64
  epochs 8
  optimizer adamw(lr: 2e-3, weight_decay: 0.05)
  schedule cosine_warmup(warmup: 100)
  clip_grad_norm 1.0
  seed 1
}
