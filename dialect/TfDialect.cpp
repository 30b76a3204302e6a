//===- TfDialect.cpp - the tf dialect and its attributes ------------------===//

#include "dialect/TfDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tfc::tf;

#include "dialect/TfDialect.cpp.inc"
#include "dialect/TfEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/TfAttrs.cpp.inc"
#include "dialect/TfInterfaces.cpp.inc"

void TFDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/TfOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/TfAttrs.cpp.inc"
      >();
}

std::string tfc::tf::formatShape(Type type) {
  auto tensor = dyn_cast<ShapedType>(type);
  if (!tensor || !tensor.hasRank()) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << type;
    return s;
  }
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      tensor.getShape(), os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      ", ");
  os << "]";
  return s;
}

//===----------------------------------------------------------------------===//
// #tf.init<kind[, scale]>
//===----------------------------------------------------------------------===//

Attribute InitAttr::parse(AsmParser &parser, Type) {
  StringRef keyword;
  double scale = 0.0;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(keyword);
  if (!kind) {
    parser.emitError(loc, "unknown initialiser '")
        << keyword << "'; expected zeros, ones, uniform or normal";
    return {};
  }
  if (*kind == InitKind::uniform || *kind == InitKind::normal) {
    if (parser.parseComma() || parser.parseFloat(scale))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<InitAttr>(loc, parser.getContext(), *kind,
                                    llvm::APFloat(scale));
}

void InitAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyInitKind(getKind());
  if (getKind() == InitKind::uniform || getKind() == InitKind::normal)
    printer << ", " << getScale().convertToDouble();
  printer << ">";
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, llvm::APFloat scale) {
  if ((kind == InitKind::uniform || kind == InitKind::normal) &&
      !(scale.convertToDouble() > 0.0))
    return emitError() << "initialiser scale must be positive, got "
                       << scale.convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// Function argument and result attributes
//===----------------------------------------------------------------------===//

LogicalResult TFDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << attr.getName() << " only applies to functions";
  Type type = func.getArgumentTypes()[argIndex];
  StringRef name = attr.getName().getValue();
  auto isF32Tensor = [&] {
    auto t = dyn_cast<RankedTensorType>(type);
    return t && t.hasStaticShape() && t.getElementType().isF32();
  };
  if (name == kParamAttr) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return op->emitError() << "argument #" << argIndex
                             << ": tf.param must be a non-empty string";
    if (!isF32Tensor())
      return op->emitError() << "parameter '" << str.getValue()
                             << "' must be a static f32 tensor, got " << type;
    return success();
  }
  if (name == kNoDecayAttr) {
    if (!isa<UnitAttr>(attr.getValue()) || !func.getArgAttr(argIndex, kParamAttr))
      return op->emitError() << "argument #" << argIndex
                             << ": tf.no_decay is a unit attribute of a parameter";
    return success();
  }
  if (name == kDecayAttr) {
    if (!isa<BoolAttr>(attr.getValue()) || !func.getArgAttr(argIndex, kParamAttr))
      return op->emitError() << "argument #" << argIndex
                             << ": tf.decay is a bool attribute of a parameter";
    return success();
  }
  if (name == kInitAttr) {
    if (!isa<InitAttr>(attr.getValue()))
      return op->emitError() << "argument #" << argIndex
                             << ": tf.init must be a #tf.init attribute";
    return success();
  }
  if (name == kInputAttr) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return op->emitError() << "argument #" << argIndex
                             << ": tf.input must be a non-empty string";
    return success();
  }
  if (name == kKvCacheAttr) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty() || !isF32Tensor())
      return op->emitError() << "argument #" << argIndex
                             << ": tf.kv_cache names a static f32 tensor";
    return success();
  }
  if (name == kSeedAttr || name == kSampleOffsetAttr || name == kPositionAttr) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!isa<UnitAttr>(attr.getValue()) || !t || t.getRank() != 0 ||
        !t.getElementType().isInteger(32))
      return op->emitError() << "argument #" << argIndex << ": " << name
                             << " marks a tensor<i32> argument";
    return success();
  }
  return op->emitError() << "unknown tf argument attribute '" << name << "'";
}

LogicalResult TFDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                     unsigned resultIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kLossAttr) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    auto t = func ? dyn_cast<RankedTensorType>(
                        func.getResultTypes()[resultIndex])
                  : RankedTensorType();
    if (!t || t.getRank() != 0 || !t.getElementType().isF32())
      return op->emitError() << "result #" << resultIndex
                             << ": the tf.loss must be a tensor<f32>";
    return success();
  }
  if (name == kOutputAttr || name == kMetricAttr || name == kAttentionAttr ||
      name == kKvCacheAttr) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return op->emitError() << "result #" << resultIndex << ": " << name
                             << " must be a non-empty string";
    return success();
  }
  return op->emitError() << "unknown tf result attribute '" << name << "'";
}
