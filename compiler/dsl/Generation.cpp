//===- Generation.cpp - the prefill and decode functions of `generate` ----===//
//
// A model that declares `generate` is built three times from its code: as
// itself, as its prefill (the whole sequence at batch 1, which also returns
// each self-attention's keys and values) and as its decode step (one token
// at a position, at batch 1). The code runs unchanged; the few things that
// depend on the position are built differently here: the input's sequence
// axis has length 1, a positional table gives its row at the position, a
// causal mask gives its row, and a self-attention writes its new key and
// value into the caches and attends over them. What the decode step computes
// per token is then a matrix-vector product per layer plus attention over
// the cache, instead of the whole sequence again.
//
//===----------------------------------------------------------------------===//

#include "compiler/dsl/DSL.h"
#include "compiler/dsl/ShapeText.h"

using namespace mlir;

namespace tfc {

namespace {
/// The constant i32 [0, 1, ..., n - 1]: not arange(), which in the decode
/// step gives the position.
Tensor positions(Builder &b, int64_t n) {
  std::vector<int32_t> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = int32_t(i);
  auto type = RankedTensorType::get({n}, b.ops().getI32Type());
  return b.constant(DenseElementsAttr::get(type, ArrayRef<int32_t>(values)));
}
} // namespace

void Builder::generate(Tensor logits, Tensor tokens, SourceLoc at) {
  CallSite site(this, at);
  if (!logits.valid() || !tokens.valid())
    return;
  if (generation_) {
    error("a model generates from one input: `generate` is declared twice");
    return;
  }
  auto arg = dyn_cast<BlockArgument>(tokens.value());
  bool isInput = arg && arg.getOwner() == &func_.getBody().front() &&
                 arg.getArgNumber() < argAttrs_.size() &&
                 argAttrs_[arg.getArgNumber()].get(tf::TFDialect::kInputAttr);
  if (!isInput) {
    error("generate: the tokens must be a model input i32[batch, seq], not a computed tensor");
    return;
  }
  if (tokens.dtype() != DType::i32 || tokens.rank() != 2) {
    error("generate: the tokens must be i32[batch, seq], got " + shapeStr(tokens.shape()) +
          (tokens.dtype() == DType::f32 ? " of f32" : tokens.dtype() == DType::i32 ? "" : " of bool"));
    return;
  }
  if (logits.dtype() != DType::f32 || logits.rank() != 3 || logits.dim(0) != tokens.dim(0) ||
      logits.dim(1) != tokens.dim(1)) {
    error("generate: the logits must be f32[batch, seq, vocab], a score of every token at "
          "every position of the tokens " + shapeStr(tokens.shape()) + ", got " +
          shapeStr(logits.shape()));
    return;
  }
  GenerationSpec spec;
  spec.input = cast<StringAttr>(argAttrs_[arg.getArgNumber()].get(tf::TFDialect::kInputAttr))
                   .getValue()
                   .str();
  spec.length = options_.generation == GenerationPass::none ? tokens.dim(1)
                                                            : options_.generationSpec.length;
  spec.vocab = logits.dim(2);
  generation_ = spec;
  if (options_.generation != GenerationPass::none)
    addResult(logits, ops_.getNamedAttr(tf::TFDialect::kOutputAttr, ops_.getStringAttr("logits")));
}

Tensor Builder::position() {
  if (!position_.valid())
    position_ = addArgument(RankedTensorType::get({}, ops_.getI32Type()),
                            {ops_.getNamedAttr(tf::TFDialect::kPositionAttr, ops_.getUnitAttr())});
  return position_;
}

Tensor Builder::sequenceRow(Tensor table) {
  int64_t length = options_.generationSpec.length;
  if (options_.generation != GenerationPass::decode || !table.valid() || table.rank() < 1 ||
      table.dim(0) != length)
    return table;
  if (table.dtype() != DType::f32)
    return error("generate: the decode step cannot take one position's row of a " +
                 shapeStr(table.shape()) + " tensor that is not f32");
  // gather takes rows of a [rows, columns] table.
  SmallVector<int64_t> rowShape(table.shape());
  rowShape[0] = 1;
  int64_t columns = table.type().getNumElements() / length;
  Tensor rows = table.rank() == 2 ? table : reshape(table, {length, columns});
  std::vector<Tensor> row = create<tf::GatherOp>({rows, reshape(position(), {1})});
  if (row.empty())
    return {};
  return table.rank() == 2 ? row[0] : reshape(row[0], rowShape);
}

Tensor Builder::sequenceRange(Tensor range, int64_t start) {
  int64_t length = options_.generationSpec.length;
  if (options_.generation != GenerationPass::decode || !range.valid() || range.rank() != 1 ||
      range.dim(0) != length)
    return range;
  Tensor row = reshape(position(), {1});
  if (start == 0 && range.dtype() == DType::i32)
    return row;
  // There is no integer addition: exact in f32 for any length there can be.
  Tensor shifted = to_float(row) + double(start);
  return range.dtype() == DType::f32
             ? shifted
             : createTyped(tf::CastOp::getOperationName(),
                           RankedTensorType::get({1}, ops_.getI32Type()), {shifted});
}

Tensor Builder::causalMaskRow(Tensor full) {
  if (!full.valid())
    return full;
  int64_t length = options_.generationSpec.length;
  Tensor mask = full;
  if (options_.generation == GenerationPass::decode && full.rank() == 2 && full.dim(0) == length)
    mask = reshape(positions(*this, length) <= position(), {1, length});
  if (mask.valid())
    causalMasks_.insert(mask.value());
  return mask;
}

bool Builder::isCausalMask(Tensor mask) const {
  return mask.valid() && causalMasks_.contains(mask.value());
}

Tensor Builder::kvCache(StringRef name, Tensor fresh) {
  if (!fresh.valid())
    return fresh;
  auto cacheAttr = ops_.getNamedAttr(tf::TFDialect::kKvCacheAttr, ops_.getStringAttr(name));
  switch (options_.generation) {
  case GenerationPass::none:
    return fresh;
  case GenerationPass::prefill:
    addResult(fresh, cacheAttr);
    return fresh;
  case GenerationPass::decode:
    break;
  }
  int64_t length = options_.generationSpec.length;
  if (fresh.rank() != 4 || fresh.dim(2) != 1)
    return error("generate: the decode step's keys and values must be [1, heads, 1, dim], got " +
                 shapeStr(fresh.shape()));
  SmallVector<int64_t> cacheShape(fresh.shape());
  cacheShape[2] = length;
  Tensor cache = addArgument(RankedTensorType::get(cacheShape, ops_.getF32Type()), {cacheAttr});
  // The position's row is the new key (value); every other row stays.
  Tensor here = reshape(positions(*this, length) == position(), {1, 1, length, 1});
  Tensor updated = where(here, fresh, cache);
  addResult(updated, cacheAttr);
  return updated;
}

OwningOpRef<ModuleOp> buildGenerationFunctions(
    OwningOpRef<ModuleOp> module, const GenerationSpec &spec, const ModelOptions &options,
    llvm::function_ref<OwningOpRef<ModuleOp>(const ModelOptions &)> build) {
  for (GenerationPass pass : {GenerationPass::prefill, GenerationPass::decode}) {
    ModelOptions passOptions = options;
    passOptions.batch = 1;
    passOptions.training = false;
    passOptions.recordAttention = false;
    passOptions.generation = pass;
    passOptions.generationSpec = spec;
    OwningOpRef<ModuleOp> built = build(passOptions);
    if (!built)
      return nullptr;
    auto funcs = built->getOps<func::FuncOp>();
    if (funcs.empty())
      return nullptr;
    func::FuncOp func = *funcs.begin();
    StringRef passName = pass == GenerationPass::prefill ? "prefill" : "decode";
    func->remove();
    func.setSymName((func.getSymName() + "_" + passName).str());
    func->removeAttr(tf::TFDialect::kBatchAttr);
    func->setAttr(tf::TFDialect::kGenerationAttr, StringAttr::get(func.getContext(), passName));
    module->getBody()->push_back(func);
  }
  return module;
}

} // namespace tfc
