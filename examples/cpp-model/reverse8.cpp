// Reverse a sequence of 8 digits with a 2-layer pre-norm encoder: the example
// of docs/dsl.md ("C++ models in a CMake project"). Twin of reverse8.tf: both
// build the same IR, which tests/cmake checks.
#include "compiler/dsl/ModelRegistry.h"

using namespace tfc;

/// nn.Embedding written out with a raw parameter: a table [vocab, dim] drawn
/// from N(0, 1), named `<name>.weight`, left out of AdamW's weight decay as
/// embeddings are, and a gather of its rows. (The DSL's embedding() is this;
/// .tf writes it as embedding(..., name: "embed").)
static Tensor tokenEmbedding(Tensor ids, int64_t vocab, int64_t dim, llvm::StringRef name) {
  Builder &b = ids.builder();
  Builder::Scope scope(b, b.layerName("embedding", name));
  Tensor table = b.param("weight", {vocab, dim}, tf::InitKind::normal, 1.0);
  b.noWeightDecay(table);
  std::vector<Tensor> rows = b.create<tf::GatherOp>({table, ids});
  return rows.empty() ? Tensor() : rows[0];
}

/// A custom layer: parameters created inside the scope are named
/// classifier.layer_norm.*, classifier.linear.*, classifier.out.*, as the
/// .tf file's `def classifier` names them.
static Tensor classifier(Tensor x, int64_t hidden, int64_t classes) {
  Builder &b = x.builder();
  Builder::Scope scope(b, b.layerName("classifier", ""));
  Tensor h = gelu(linear(layer_norm(x), hidden));
  return linear(h, classes, {.name = "out"});
}

TFC_MODEL(reverse8, /*batch=*/64) {
  const int64_t classes = 10, seq = 8, dim = 32;
  Tensor tokens = b.input("tokens", DType::i32, {b.batch(), seq});
  Tensor labels = b.input("labels", DType::i32, {b.batch(), seq});

  // Two statements: C++ leaves the order of `+`'s operands open, and the IR
  // must be built in the .tf file's order to be the same.
  Tensor x = tokenEmbedding(tokens, classes, dim, "embed");
  x = x + positional_encoding(b, seq, dim);
  x = encoder(x, {.layers = 2, .heads = 2, .ffn = 64, .norm = NormPlacement::pre});
  Tensor logits = classifier(x, 64, classes);

  b.loss(cross_entropy(logits, labels));
  b.metric("accuracy", mean(argmax(logits, -1) == labels));
  b.output("logits", logits);

  // The .tf file's train block: the binary's defaults for `train`.
  b.train({.data = TrainCall{"reverse_sequences", {{"classes", int64_t{10}}, {"seq", int64_t{8}},
                                                 {"train", int64_t{10000}}, {"val", int64_t{500}},
                                                 {"test", int64_t{1000}}}},
           .batch = 64,
           .epochs = 3,
           .optimizer = TrainCall{"adam", {{"lr", 2e-3}}},
           .schedule = TrainCall{"cosine_warmup", {{"warmup", int64_t{50}}}},
           .seed = 1});
}
