//===- Autodiff.cpp - the generic reverse sweep ---------------------------===//
//
// Reverse mode over one block: an op is *active* when it depends on a value
// we differentiate with respect to and the loss depends on it. Walking the
// active ops backwards, each one turns the adjoints of its results into
// adjoints of its operands through its GradientOpInterface; adjoints of a
// value used several times are summed.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/Autodiff.h"
#include "dialect/TfDialect.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace tfc {
namespace {

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

Value zerosLike(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return b.create<tf::ConstantOp>(
      loc, DenseElementsAttr::get(tensor, b.getFloatAttr(tensor.getElementType(), 0.0)));
}

} // namespace

FailureOr<SmallVector<Value>> buildAdjoints(OpBuilder &builder, Value loss, ValueRange wrt) {
  Block *block = builder.getInsertionBlock();
  Location loc = loss.getLoc();

  // Forward: values that depend on `wrt`.
  SmallVector<Operation *> forward;
  for (auto it = block->begin(), end = builder.getInsertionPoint(); it != end; ++it)
    forward.push_back(&*it);
  llvm::DenseSet<Value> dependsOnWrt(wrt.begin(), wrt.end());
  for (Operation *op : forward)
    if (llvm::any_of(op->getOperands(), [&](Value v) { return dependsOnWrt.contains(v); }))
      for (Value r : op->getResults())
        dependsOnWrt.insert(r);

  // Backward: the adjoint of every value on a path from `wrt` to the loss.
  llvm::DenseMap<Value, Value> adjoint;
  auto accumulate = [&](Value v, Value grad) {
    Value &slot = adjoint[v];
    slot = slot ? builder.create<tf::AddOp>(loc, slot, grad).getResult() : grad;
  };
  auto lossType = cast<RankedTensorType>(loss.getType());
  if (lossType.getRank() != 0 || !isFloatTensor(lossType))
    return emitError(loc, "autodiff: the loss must be a scalar float tensor, got ") << lossType;
  adjoint[loss] = builder.create<tf::ConstantOp>(
      loc, DenseElementsAttr::get(lossType, builder.getF32FloatAttr(1.0f)));

  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool anyGrad = false;
    for (Value r : op->getResults()) {
      Value g = adjoint.lookup(r);
      resultGrads.push_back(g);
      anyGrad |= bool(g);
    }
    bool anyActiveOperand = llvm::any_of(op->getOperands(), [&](Value v) {
      return dependsOnWrt.contains(v) && isFloatTensor(v.getType());
    });
    if (!anyGrad || !anyActiveOperand)
      continue;
    auto differentiable = dyn_cast<tf::GradientOpInterface>(op);
    if (!differentiable)
      return op->emitError("autodiff: '")
             << op->getName() << "' has no gradient, but the loss depends on it";
    SmallVector<Value> operandGrads;
    if (failed(differentiable.buildGradient(builder, resultGrads, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError("autodiff: the gradient of '")
             << op->getName() << "' gave " << operandGrads.size() << " adjoints for "
             << op->getNumOperands() << " operands";
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !dependsOnWrt.contains(operand) || !isFloatTensor(operand.getType()))
        continue;
      if (grad.getType() != operand.getType())
        return op->emitError("autodiff: the gradient of '")
               << op->getName() << "' has type " << grad.getType() << " for an operand of type "
               << operand.getType();
      accumulate(operand, grad);
    }
  }

  SmallVector<Value> grads;
  for (Value v : wrt) {
    Value g = adjoint.lookup(v);
    grads.push_back(g ? g : zerosLike(builder, loc, v.getType()));
  }
  return grads;
}

FailureOr<func::FuncOp> createGradientFunction(func::FuncOp forward, StringRef name) {
  if (forward.getNumResults() == 0)
    return forward.emitError("autodiff: the function returns no loss");
  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto grad = cast<func::FuncOp>(b.clone(*forward));
  grad.setSymName(name);
  Block &body = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> wrt;
  for (BlockArgument arg : body.getArguments())
    if (isFloatTensor(arg.getType()))
      wrt.push_back(arg);
  Value loss = ret.getOperand(0);
  b.setInsertionPoint(ret);
  FailureOr<SmallVector<Value>> grads = buildAdjoints(b, loss, wrt);
  if (failed(grads)) {
    grad.erase();
    return failure();
  }
  SmallVector<Value> results = {loss};
  results.append(grads->begin(), grads->end());
  SmallVector<Type> types;
  for (Value v : results)
    types.push_back(v.getType());
  b.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  grad.removeResAttrsAttr();
  grad.setFunctionType(b.getFunctionType(grad.getArgumentTypes(), types));
  return grad;
}

} // namespace tfc
