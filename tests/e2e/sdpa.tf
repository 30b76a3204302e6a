# The UvA tutorial's scaled dot-product example: seq 3, d_k 2, no batch.
model sdpa {
  input q: f32[3, 2]
  input k: f32[3, 2]
  input v: f32[3, 2]
  let values, attention = scaled_dot_product(q, k, v)
  output values = values
  output attention = attention
}
