# Set anomaly detection of the UvA tutorial 6: which of 10 feature vectors
# (ResNet34 features of CIFAR-100 images) belongs to another class. No
# positional encoding: the model is permutation-equivariant over the set.
model set_anomaly {
  param set = 10
  param feature_dim = 512
  param dim = 256

  input features: f32[batch, set, feature_dim]
  input labels: i32[batch]

  let x = linear(dropout(features, 0.1), dim, name: "input_net")
  x = encoder(x, layers: 4, heads: 4, ffn: 2 * dim, dropout: 0.1, norm: "post")
  x = dropout(relu(layer_norm(linear(x, dim))), 0.1)
  let logits = squeeze(linear(x, 1, name: "output"), axis: -1)

  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}

train set_anomaly {
  # CIFAR-100 has 45,000 training images after the tutorial moves 10% of each
  # class to validation, and 10,000 test images: one set per image.
  data set_anomaly(classes: 100, features: 512, set: 10, train: 45000, val: 5000, test: 10000)
  batch 64
  epochs 100
  optimizer adam(lr: 5e-4)
  schedule cosine_warmup(warmup: 100)
  clip_grad_norm 2.0
  seed 42
}
