# `tfc builtins` prints the reference of the built-ins from the parser's own
# table: every built-in with its arguments in positional order (the order
# the parser binds them in), a description, the result's shape and an
# example (BuiltinsTest compiles each one); then the train block's names
# from runtime/TrainBlock.h. SIG lists every built-in's signature, and
# nothing else may be listed: a built-in added to the table is added here.
# RUN: tfc builtins | FileCheck %s
# RUN: tfc builtins -o %t.md && FileCheck %s < %t.md
# RUN: tfc builtins | grep '^`[a-z_0-9]*(' | sed 's/)`: .*/)`/' | FileCheck %s --check-prefix=SIG --match-full-lines

# CHECK-LABEL: # The built-in functions of the `.tf` language
# CHECK: input x: f32[2, 4, 8]
# CHECK-NEXT: input y: f32[2, 4, 8]
# CHECK-NEXT: input ids: i32[2, 4]

# CHECK-LABEL: ## Layers
# CHECK-EMPTY:
# CHECK-NEXT: ### linear
# CHECK-EMPTY:
# CHECK-NEXT: `linear(x, out, bias, name, init, decay, weight)`: x @ W^T + b over the last axis (nn.Linear): W [out, in] and b [out] are parameters.
# CHECK-EMPTY:
# CHECK-NEXT: - Result: [..., in] -> [..., out]
# CHECK-NEXT: - Example: `linear(x, 16)` is `f32[2, 4, 16]`
# CHECK-EMPTY:
# CHECK-NEXT: | argument | kind | default | |
# CHECK-NEXT: |---|---|---|---|
# CHECK-NEXT: | `x` | tensor | required | the input, [..., in] |
# CHECK-NEXT: | `out` | int | required | the output features |
# CHECK-NEXT: | `bias` | bool | `true` | add the bias b |
# CHECK-NEXT: | `name` | string | `linear`, `linear_1`, ... in its scope | keyword only: the prefix of its parameters' names (`name: "proj"` gives `proj.weight`) |
# CHECK-NEXT: | `init` | initialiser | `kaiming` | the initialiser of its weight matrices (biases and norms keep theirs) |
# CHECK-NEXT: | `decay` | bool | the optimizer's rule | false: none of its parameters gets weight decay; true: all of them do |
# CHECK-NEXT: | `weight` | tensor | a new parameter | an f32 [out, in] tensor to use as W (weight tying) |

# The enumerated strings list their choices.
# CHECK: `encoder(x, layers, heads, ffn, dropout, norm, mask, name, activation, init, decay)`
# CHECK: | `norm` | "post" or "pre" | `"post"` |
# CHECK: | `activation` | "relu", "gelu" or "swiglu" | `"relu"` |

# CHECK: ### scaled_dot_product
# CHECK-EMPTY:
# CHECK-NEXT: `scaled_dot_product(q, k, v, mask)`: softmax(q k^T / sqrt(d)) v, and the weights (bind both: `let values, weights = ...`).
# CHECK-EMPTY:
# CHECK-NEXT: - Result: q [..., T, d], k [..., S, d], v [..., S, e] -> ([..., T, e], [..., T, S])
# CHECK-NEXT: - Example: `scaled_dot_product(x, y, y, mask: causal_mask(4))` is `(f32[2, 4, 8], f32[2, 4, 4])`
# CHECK: | `mask` | tensor | none | bool, true where attending is allowed; broadcasts to [..., T, S] |

# CHECK-LABEL: ## The train block
# CHECK: Its keys: `data`, `batch`, `epochs`, `optimizer`, `schedule`, `clip_grad_norm`, `seed`, `best`.
# CHECK: | `adamw` | `lr`, `beta1`, `beta2`, `eps`, `weight_decay`, `decay_all` |
# CHECK: | `cosine_warmup` | `warmup` |
# CHECK: | `npy` | `dir` |

# Every built-in, with its arguments in positional order.
# SIG: `linear(x, out, bias, name, init, decay, weight)`
# SIG-NEXT: `layer_norm(x, eps, name, decay)`
# SIG-NEXT: `conv1d(x, out, kernel, padding, bias, name, init, decay)`
# SIG-NEXT: `embedding(ids, vocab, dim, name, init, decay, table)`
# SIG-NEXT: `multi_head_attention(x, heads, memory, mask, name, init, decay)`
# SIG-NEXT: `encoder(x, layers, heads, ffn, dropout, norm, mask, name, activation, init, decay)`
# SIG-NEXT: `decoder(x, memory, layers, heads, ffn, dropout, norm, mask, memory_mask, name, activation, init, decay)`
# SIG-NEXT: `parameter(shape, init, name, decay)`
# SIG-NEXT: `normal(std)`
# SIG-NEXT: `uniform(bound)`
# SIG-NEXT: `zeros(shape, dtype)`
# SIG-NEXT: `ones(shape, dtype)`
# SIG-NEXT: `full(shape, value, dtype)`
# SIG-NEXT: `arange(start, limit, dtype)`
# SIG-NEXT: `eye(n, dtype)`
# SIG-NEXT: `one_hot(ids, n)`
# SIG-NEXT: `positional_encoding(len, dim)`
# SIG-NEXT: `causal_mask(n)`
# SIG-NEXT: `scaled_dot_product(q, k, v, mask)`
# SIG-NEXT: `dropout(x, p)`
# SIG-NEXT: `relu(x)`
# SIG-NEXT: `gelu(x)`
# SIG-NEXT: `silu(x)`
# SIG-NEXT: `tanh(x)`
# SIG-NEXT: `exp(x)`
# SIG-NEXT: `log(x)`
# SIG-NEXT: `sqrt(x)`
# SIG-NEXT: `rsqrt(x)`
# SIG-NEXT: `maximum(a, b)`
# SIG-NEXT: `minimum(a, b)`
# SIG-NEXT: `logical_and(a, b)`
# SIG-NEXT: `logical_or(a, b)`
# SIG-NEXT: `logical_not(x)`
# SIG-NEXT: `where(cond, a, b)`
# SIG-NEXT: `softmax(x, axis)`
# SIG-NEXT: `log_softmax(x, axis)`
# SIG-NEXT: `sum(x, axis)`
# SIG-NEXT: `mean(x, axis)`
# SIG-NEXT: `max(x, axis)`
# SIG-NEXT: `argmax(x, axis)`
# SIG-NEXT: `transpose(x, perm)`
# SIG-NEXT: `broadcast_to(x, shape)`
# SIG-NEXT: `reshape(x, shape)`
# SIG-NEXT: `squeeze(x, axis)`
# SIG-NEXT: `unsqueeze(x, axis)`
# SIG-NEXT: `concat(tensors, axis)`
# SIG-NEXT: `slice(x, axis, start, limit)`
# SIG-NEXT: `float(x)`
# SIG-NEXT: `cross_entropy(logits, labels, axis, ignore_index, label_smoothing, weight)`
# SIG-NEXT: `mse(a, b)`
# SIG-NOT: {{.}}
