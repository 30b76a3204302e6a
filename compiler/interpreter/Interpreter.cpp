//===- Interpreter.cpp - the reference interpreter of the tf dialect ------===//
//
// One small function per op family, loops written out, everything in
// double. Clarity over speed: this is the definition of right.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/Interpreter.h"

#include "dialect/TfDialect.h"
#include "runtime/Philox.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

using namespace mlir;

namespace tfc {

int64_t HostTensor::numElements() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}
HostTensor HostTensor::f32(std::vector<int64_t> s, std::vector<double> d) {
  return {ElementType::f32, std::move(s), std::move(d)};
}
HostTensor HostTensor::i32(std::vector<int64_t> s, std::vector<double> d) {
  return {ElementType::i32, std::move(s), std::move(d)};
}
HostTensor HostTensor::i1(std::vector<int64_t> s, std::vector<double> d) {
  return {ElementType::i1, std::move(s), std::move(d)};
}

static ElementType elementTypeOf(Type type) {
  Type e = cast<ShapedType>(type).getElementType();
  if (e.isF32())
    return ElementType::f32;
  return e.isInteger(1) ? ElementType::i1 : ElementType::i32;
}

/// An empty tensor of `type`'s shape and element type, zero-filled.
static HostTensor like(Type type) {
  auto t = cast<RankedTensorType>(type);
  HostTensor r{elementTypeOf(type), std::vector<int64_t>(t.getShape()), {}};
  r.data.assign(r.numElements(), 0.0);
  return r;
}

HostTensor HostTensor::zeros(Type type) { return like(type); }

HostTensor fromAttr(ElementsAttr attr) {
  HostTensor r = like(attr.getShapedType());
  Type e = attr.getElementType();
  int64_t i = 0;
  if (e.isF32()) {
    for (APFloat v : attr.getValues<APFloat>())
      r.data[i++] = v.convertToDouble();
  } else if (e.isInteger(1)) {
    for (APInt v : attr.getValues<APInt>())
      r.data[i++] = v.isZero() ? 0.0 : 1.0;
  } else {
    for (APInt v : attr.getValues<APInt>())
      r.data[i++] = static_cast<double>(v.getSExtValue());
  }
  return r;
}

namespace {

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// The multi-index of linear position `linear` in `shape`.
std::vector<int64_t> unravel(int64_t linear, ArrayRef<int64_t> shape) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}

int64_t product(ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// Splits `shape` around `axis` into [outer, n, inner].
std::array<int64_t, 3> around(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), shape[axis],
          product(shape.drop_front(axis + 1))};
}

class Interpreter {
public:
  explicit Interpreter(std::string *error) : error_(error) {}

  FailureOr<std::vector<HostTensor>> run(func::FuncOp func,
                                         ArrayRef<HostTensor> args) {
    if (func.getBody().empty())
      return fail("function '" + func.getName().str() + "' has no body");
    Block &entry = func.getBody().front();
    if (args.size() != entry.getNumArguments())
      return fail(llvm::formatv("'{0}' takes {1} arguments, got {2}",
                                func.getName(), entry.getNumArguments(),
                                args.size())
                      .str());
    for (auto [arg, value] : llvm::zip(entry.getArguments(), args)) {
      HostTensor expected = like(arg.getType());
      if (expected.shape != value.shape || expected.type != value.type ||
          int64_t(value.data.size()) != value.numElements())
        return fail(llvm::formatv("argument #{0} must be {1} {2}, got {3} {4}",
                                  arg.getArgNumber(), typeName(expected.type),
                                  shapeStr(expected.shape), typeName(value.type),
                                  shapeStr(value.shape))
                        .str());
      env_[arg] = value;
    }
    for (Operation &op : entry.without_terminator())
      if (failed(eval(&op)))
        return failure();
    std::vector<HostTensor> results;
    for (Value v : entry.getTerminator()->getOperands())
      results.push_back(env_.lookup(v));
    return results;
  }

private:
  static const char *typeName(ElementType t) {
    return t == ElementType::f32 ? "f32" : t == ElementType::i32 ? "i32" : "i1";
  }

  LogicalResult fail(const std::string &message) {
    if (error_)
      *error_ = message;
    return failure();
  }

  const HostTensor &in(Value v) { return env_[v]; }
  void set(Value v, HostTensor t) { env_[v] = std::move(t); }

  LogicalResult eval(Operation *op) {
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](tf::ConstantOp c) {
          set(c.getResult(), fromAttr(c.getValue()));
          return success();
        })
        .Case([&](tf::NegOp o) { return unary(o, [](double x) { return -x; }); })
        .Case([&](tf::ExpOp o) { return unary(o, [](double x) { return std::exp(x); }); })
        .Case([&](tf::LogOp o) { return unary(o, [](double x) { return std::log(x); }); })
        .Case([&](tf::SqrtOp o) { return unary(o, [](double x) { return std::sqrt(x); }); })
        .Case([&](tf::RsqrtOp o) { return unary(o, [](double x) { return 1 / std::sqrt(x); }); })
        .Case([&](tf::TanhOp o) { return unary(o, [](double x) { return std::tanh(x); }); })
        .Case([&](tf::SinOp o) { return unary(o, [](double x) { return std::sin(x); }); })
        .Case([&](tf::CosOp o) { return unary(o, [](double x) { return std::cos(x); }); })
        .Case([&](tf::ReluOp o) { return unary(o, [](double x) { return x > 0 ? x : 0.0; }); })
        .Case([&](tf::GeluOp o) {
          return unary(o, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
        })
        .Case([&](tf::ErfOp o) { return unary(o, [](double x) { return std::erf(x); }); })
        .Case([&](tf::NotOp o) { return unary(o, [](double x) { return x != 0 ? 0.0 : 1.0; }); })
        .Case([&](tf::AddOp o) { return binary(o, [](double a, double b) { return a + b; }); })
        .Case([&](tf::SubOp o) { return binary(o, [](double a, double b) { return a - b; }); })
        .Case([&](tf::MulOp o) { return binary(o, [](double a, double b) { return a * b; }); })
        .Case([&](tf::DivOp o) { return binary(o, [](double a, double b) { return a / b; }); })
        .Case([&](tf::MaxOp o) { return binary(o, [](double a, double b) { return std::max(a, b); }); })
        .Case([&](tf::MinOp o) { return binary(o, [](double a, double b) { return std::min(a, b); }); })
        .Case([&](tf::AndOp o) { return binary(o, [](double a, double b) { return double(a != 0 && b != 0); }); })
        .Case([&](tf::OrOp o) { return binary(o, [](double a, double b) { return double(a != 0 || b != 0); }); })
        .Case([&](tf::CompareOp o) { return compare(o); })
        .Case([&](tf::SelectOp o) { return select(o); })
        .Case([&](tf::CastOp o) { return castOp(o); })
        .Case([&](tf::BroadcastInDimOp o) { return broadcast(o); })
        .Case([&](tf::ReshapeOp o) {
          HostTensor r = like(o.getType());
          r.data = in(o.getX()).data;
          set(o.getResult(), std::move(r));
          return success();
        })
        .Case([&](tf::TransposeOp o) { return transpose(o); })
        .Case([&](tf::SliceOp o) { return slice(o); })
        .Case([&](tf::ConcatOp o) { return concat(o); })
        .Case([&](tf::ReduceSumOp o) { return reduce(o, 0.0, std::plus<double>(), false); })
        .Case([&](tf::ReduceMeanOp o) { return reduce(o, 0.0, std::plus<double>(), true); })
        .Case([&](tf::ReduceMaxOp o) {
          return reduce(o, -std::numeric_limits<double>::infinity(),
                        [](double a, double b) { return std::max(a, b); }, false);
        })
        .Case([&](tf::ArgmaxOp o) { return argmax(o); })
        .Case([&](tf::MatmulOp o) { return matmul(o); })
        .Case([&](tf::SoftmaxOp o) { return softmax(o, o.getAxisAttr().getInt(), false); })
        .Case([&](tf::LogSoftmaxOp o) { return softmax(o, o.getAxisAttr().getInt(), true); })
        .Case([&](tf::LayerNormOp o) { return layerNorm(o); })
        .Case([&](tf::LayerNormGradOp o) { return layerNormGrad(o); })
        .Case([&](tf::DropoutOp o) { return dropout(o); })
        .Case([&](tf::AttentionOp o) { return attention(o); })
        .Case([&](tf::AttentionGradOp o) { return attentionGrad(o); })
        .Case([&](tf::Conv1dOp o) { return conv1d(o); })
        .Case([&](tf::OneHotOp o) { return oneHot(o); })
        .Case([&](tf::GatherOp o) { return gather(o); })
        .Case([&](tf::CrossEntropyOp o) { return crossEntropy(o); })
        .Case([&](tf::CrossEntropyGradOp o) { return crossEntropyGrad(o); })
        .Case([&](tf::MseOp o) {
          const HostTensor &a = in(o.getLhs()), &b = in(o.getRhs());
          double s = 0;
          for (size_t i = 0; i < a.data.size(); ++i)
            s += (a.data[i] - b.data[i]) * (a.data[i] - b.data[i]);
          set(o.getResult(), HostTensor::f32({}, {s / a.data.size()}));
          return success();
        })
        .Case([&](tf::FusionOp o) {
          // A fusion means its body's ops, in order.
          for (Operation &inner : o.getBodyBlock().without_terminator())
            if (failed(eval(&inner)))
              return failure();
          for (auto [result, value] :
               llvm::zip(o.getResults(), o.getBodyBlock().getTerminator()->getOperands()))
            set(result, in(value));
          return success();
        })
        .Default([&](Operation *other) {
          return fail("unsupported op '" + other->getName().getStringRef().str() + "'");
        });
  }

  template <typename OpT, typename Fn>
  LogicalResult unary(OpT op, Fn fn) {
    HostTensor r = like(op.getType());
    const HostTensor &x = in(op->getOperand(0));
    for (size_t i = 0; i < r.data.size(); ++i)
      r.data[i] = fn(x.data[i]);
    set(op.getResult(), std::move(r));
    return success();
  }

  template <typename OpT, typename Fn>
  LogicalResult binary(OpT op, Fn fn) {
    HostTensor r = like(op.getType());
    const HostTensor &a = in(op->getOperand(0)), &b = in(op->getOperand(1));
    for (size_t i = 0; i < r.data.size(); ++i)
      r.data[i] = fn(a.data[i], b.data[i]);
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult compare(tf::CompareOp op) {
    switch (op.getPredicate()) {
    case tf::ComparePredicate::eq:
      return binary(op, [](double a, double b) { return double(a == b); });
    case tf::ComparePredicate::ne:
      return binary(op, [](double a, double b) { return double(a != b); });
    case tf::ComparePredicate::lt:
      return binary(op, [](double a, double b) { return double(a < b); });
    case tf::ComparePredicate::le:
      return binary(op, [](double a, double b) { return double(a <= b); });
    case tf::ComparePredicate::gt:
      return binary(op, [](double a, double b) { return double(a > b); });
    case tf::ComparePredicate::ge:
      return binary(op, [](double a, double b) { return double(a >= b); });
    }
    return fail("unknown comparison predicate");
  }

  LogicalResult select(tf::SelectOp op) {
    HostTensor r = like(op.getType());
    const HostTensor &c = in(op.getCond()), &a = in(op.getOnTrue()),
                     &b = in(op.getOnFalse());
    for (size_t i = 0; i < r.data.size(); ++i)
      r.data[i] = c.data[i] != 0 ? a.data[i] : b.data[i];
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult castOp(tf::CastOp op) {
    HostTensor r = like(op.getType());
    const HostTensor &x = in(op.getX());
    for (size_t i = 0; i < r.data.size(); ++i) {
      double v = x.data[i];
      r.data[i] = r.type == ElementType::i1   ? double(v != 0)
                  : r.type == ElementType::i32 ? std::trunc(v)
                                               : v;
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult broadcast(tf::BroadcastInDimOp op) {
    HostTensor r = like(op.getType());
    const HostTensor &x = in(op.getX());
    std::vector<int64_t> xs = stridesOf(x.shape);
    ArrayRef<int64_t> dims = op.getDims();
    for (int64_t i = 0; i < int64_t(r.data.size()); ++i) {
      std::vector<int64_t> idx = unravel(i, r.shape);
      int64_t src = 0;
      for (size_t d = 0; d < dims.size(); ++d)
        src += (x.shape[d] == 1 ? 0 : idx[dims[d]]) * xs[d];
      r.data[i] = x.data[src];
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult transpose(tf::TransposeOp op) {
    HostTensor r = like(op.getType());
    const HostTensor &x = in(op.getX());
    std::vector<int64_t> xs = stridesOf(x.shape);
    ArrayRef<int64_t> perm = op.getPerm();
    for (int64_t i = 0; i < int64_t(r.data.size()); ++i) {
      std::vector<int64_t> idx = unravel(i, r.shape);
      int64_t src = 0;
      for (size_t d = 0; d < perm.size(); ++d)
        src += idx[d] * xs[perm[d]];
      r.data[i] = x.data[src];
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult slice(tf::SliceOp op) {
    HostTensor r = like(op.getType());
    const HostTensor &x = in(op.getX());
    std::vector<int64_t> xs = stridesOf(x.shape);
    ArrayRef<int64_t> start = op.getStart(), stride = op.getStride();
    for (int64_t i = 0; i < int64_t(r.data.size()); ++i) {
      std::vector<int64_t> idx = unravel(i, r.shape);
      int64_t src = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        src += (start[d] + idx[d] * stride[d]) * xs[d];
      r.data[i] = x.data[src];
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult concat(tf::ConcatOp op) {
    HostTensor r = like(op.getType());
    int64_t axis = op.getAxisAttr().getInt();
    auto [outer, total, inner] = around(r.shape, axis);
    int64_t offset = 0;
    for (Value v : op.getInputs()) {
      const HostTensor &x = in(v);
      int64_t n = x.shape[axis];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < n; ++k)
          for (int64_t j = 0; j < inner; ++j)
            r.data[(o * total + offset + k) * inner + j] = x.data[(o * n + k) * inner + j];
      offset += n;
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  template <typename OpT, typename Fn>
  LogicalResult reduce(OpT op, double init, Fn combine, bool mean) {
    const HostTensor &x = in(op.getX());
    HostTensor r = like(op.getType());
    std::fill(r.data.begin(), r.data.end(), init);
    ArrayRef<int64_t> axes = op.getAxes();
    std::vector<int64_t> keep;
    for (int64_t d = 0; d < int64_t(x.shape.size()); ++d)
      if (!llvm::is_contained(axes, d))
        keep.push_back(d);
    std::vector<int64_t> rs = stridesOf(r.shape);
    for (int64_t i = 0; i < int64_t(x.data.size()); ++i) {
      std::vector<int64_t> idx = unravel(i, x.shape);
      int64_t dst = 0;
      for (size_t k = 0; k < keep.size(); ++k)
        dst += idx[keep[k]] * rs[k];
      r.data[dst] = combine(r.data[dst], x.data[i]);
    }
    if (mean) {
      double count = double(x.data.size()) / double(r.data.size());
      for (double &v : r.data)
        v /= count;
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult argmax(tf::ArgmaxOp op) {
    const HostTensor &x = in(op.getX());
    HostTensor r = like(op.getType());
    auto [outer, n, inner] = around(x.shape, op.getAxisAttr().getInt());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t best = 0;
        for (int64_t k = 1; k < n; ++k) // strict '>' keeps the first maximum
          if (x.data[(o * n + k) * inner + j] > x.data[(o * n + best) * inner + j])
            best = k;
        r.data[o * inner + j] = double(best);
      }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult matmul(tf::MatmulOp op) {
    const HostTensor &a = in(op.getLhs()), &b = in(op.getRhs());
    HostTensor r = like(op.getType());
    size_t rank = r.shape.size();
    int64_t m = r.shape[rank - 2], n = r.shape[rank - 1];
    int64_t k = op.getTransposeLhs() ? a.shape[rank - 2] : a.shape[rank - 1];
    int64_t batch = product(ArrayRef<int64_t>(r.shape).drop_back(2));
    bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
    for (int64_t p = 0; p < batch; ++p) {
      const double *A = a.data.data() + p * m * k;
      const double *B = b.data.data() + p * k * n;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t l = 0; l < k; ++l)
            s += (ta ? A[l * m + i] : A[i * k + l]) * (tb ? B[j * k + l] : B[l * n + j]);
          r.data[(p * m + i) * n + j] = s;
        }
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  /// Softmax (or log-softmax) of `x` along `axis`, max-shifted for range.
  static void softmaxInto(const std::vector<double> &x, std::vector<double> &out,
                          ArrayRef<int64_t> shape, int64_t axis, bool log) {
    auto [outer, n, inner] = around(shape, axis);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        auto at = [&](int64_t k) { return (o * n + k) * inner + j; };
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < n; ++k)
          mx = std::max(mx, x[at(k)]);
        double sum = 0;
        for (int64_t k = 0; k < n; ++k)
          sum += std::exp(x[at(k)] - mx);
        for (int64_t k = 0; k < n; ++k)
          out[at(k)] = log ? x[at(k)] - mx - std::log(sum) : std::exp(x[at(k)] - mx) / sum;
      }
  }

  template <typename OpT>
  LogicalResult softmax(OpT op, int64_t axis, bool log) {
    HostTensor r = like(op.getType());
    softmaxInto(in(op.getX()).data, r.data, r.shape, axis, log);
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult layerNorm(tf::LayerNormOp op) {
    const HostTensor &x = in(op.getX()), &g = in(op.getGamma()), &b = in(op.getBeta());
    HostTensor r = like(op.getType());
    int64_t d = x.shape.back(), rows = x.numElements() / d;
    double eps = op.getEpsilon().convertToDouble();
    for (int64_t i = 0; i < rows; ++i) {
      const double *row = x.data.data() + i * d;
      double mu = 0, var = 0;
      for (int64_t j = 0; j < d; ++j)
        mu += row[j] / d;
      for (int64_t j = 0; j < d; ++j)
        var += (row[j] - mu) * (row[j] - mu) / d; // biased, as PyTorch
      for (int64_t j = 0; j < d; ++j)
        r.data[i * d + j] = (row[j] - mu) / std::sqrt(var + eps) * g.data[j] + b.data[j];
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  /// The formulas of tf.layer_norm_grad (TfOps.td).
  LogicalResult layerNormGrad(tf::LayerNormGradOp op) {
    const HostTensor &x = in(op.getX()), &gamma = in(op.getGamma()), &g = in(op.getGrad());
    HostTensor dx = like(op.getDx().getType()), dgamma = like(op.getDgamma().getType()),
               dbeta = like(op.getDbeta().getType());
    int64_t d = x.shape.back(), rows = x.numElements() / d;
    double eps = op.getEpsilon().convertToDouble();
    std::vector<double> xhat(d), dxhat(d);
    for (int64_t i = 0; i < rows; ++i) {
      const double *row = x.data.data() + i * d, *grow = g.data.data() + i * d;
      double mu = 0, var = 0;
      for (int64_t j = 0; j < d; ++j)
        mu += row[j] / d;
      for (int64_t j = 0; j < d; ++j)
        var += (row[j] - mu) * (row[j] - mu) / d;
      double rstd = 1 / std::sqrt(var + eps), meanDxhat = 0, meanDxhatXhat = 0;
      for (int64_t j = 0; j < d; ++j) {
        xhat[j] = (row[j] - mu) * rstd;
        dxhat[j] = grow[j] * gamma.data[j];
        meanDxhat += dxhat[j] / d;
        meanDxhatXhat += dxhat[j] * xhat[j] / d;
        dgamma.data[j] += grow[j] * xhat[j];
        dbeta.data[j] += grow[j];
      }
      for (int64_t j = 0; j < d; ++j)
        dx.data[i * d + j] = rstd * (dxhat[j] - meanDxhat - xhat[j] * meanDxhatXhat);
    }
    set(op.getDx(), std::move(dx));
    set(op.getDgamma(), std::move(dgamma));
    set(op.getDbeta(), std::move(dbeta));
    return success();
  }

  LogicalResult dropout(tf::DropoutOp op) {
    const HostTensor &x = in(op.getX());
    HostTensor r = x;
    if (op.getTraining()) {
      double rate = op.getRate().convertToDouble();
      auto seed = static_cast<uint32_t>(static_cast<int64_t>(in(op.getSeed()).data[0]));
      auto key = static_cast<uint64_t>(op.getKeyAttr().getInt());
      // Element i counts as first + i: one process's index of a rank's
      // share of a data-parallel batch.
      int64_t first = 0;
      if (op.getSampleOffset())
        first = static_cast<int64_t>(in(op.getSampleOffset()).data[0]) *
                op.getSampleSizeAttr().getInt();
      for (int64_t i = 0; i < int64_t(r.data.size()); ++i)
        r.data[i] = dropoutUniform(seed, key, uint64_t(first + i)) < rate ? 0.0
                                                                          : x.data[i] / (1 - rate);
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult attention(tf::AttentionOp op) {
    const HostTensor &q = in(op.getQ()), &k = in(op.getK()), &v = in(op.getV());
    const HostTensor *mask = op.getMask() ? &in(op.getMask()) : nullptr;
    HostTensor values = like(op.getValues().getType());
    size_t rank = q.shape.size();
    int64_t tq = q.shape[rank - 2], d = q.shape[rank - 1], tk = k.shape[rank - 2],
            dv = v.shape[rank - 1];
    int64_t batch = product(ArrayRef<int64_t>(q.shape).drop_back(2));
    double scale = op.getScale().convertToDouble();
    std::vector<double> weights(batch * tq * tk);
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < tq; ++i)
        for (int64_t j = 0; j < tk; ++j) {
          double s = 0;
          for (int64_t l = 0; l < d; ++l)
            s += q.data[(p * tq + i) * d + l] * k.data[(p * tk + j) * d + l];
          int64_t w = (p * tq + i) * tk + j;
          // The tutorials' masked_fill(mask == 0, -9e15).
          weights[w] = mask && mask->data[w] == 0 ? -9e15 : s * scale;
        }
    std::vector<int64_t> wshape = {batch * tq, tk};
    softmaxInto(weights, weights, wshape, 1, false);
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < tq; ++i)
        for (int64_t c = 0; c < dv; ++c) {
          double s = 0;
          for (int64_t j = 0; j < tk; ++j)
            s += weights[(p * tq + i) * tk + j] * v.data[(p * tk + j) * dv + c];
          values.data[(p * tq + i) * dv + c] = s;
        }
    set(op.getValues(), std::move(values));
    if (Value w = op.getWeights()) {
      HostTensor wt = like(w.getType());
      wt.data = std::move(weights);
      set(w, std::move(wt));
    }
    return success();
  }

  /// The formulas of tf.attention_grad (TfOps.td), P spelled out in full.
  LogicalResult attentionGrad(tf::AttentionGradOp op) {
    const HostTensor &q = in(op.getQ()), &k = in(op.getK()), &v = in(op.getV());
    const HostTensor &dO = in(op.getDvalues());
    const HostTensor *mask = op.getMask() ? &in(op.getMask()) : nullptr;
    HostTensor dq = like(op.getDq().getType()), dk = like(op.getDk().getType()),
               dv = like(op.getDv().getType());
    size_t rank = q.shape.size();
    int64_t tq = q.shape[rank - 2], d = q.shape[rank - 1], tk = k.shape[rank - 2],
            dvDim = v.shape[rank - 1];
    int64_t batch = product(ArrayRef<int64_t>(q.shape).drop_back(2));
    double scale = op.getScale().convertToDouble();
    std::vector<double> p(batch * tq * tk);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < tq; ++i)
        for (int64_t j = 0; j < tk; ++j) {
          double s = 0;
          for (int64_t l = 0; l < d; ++l)
            s += q.data[(b * tq + i) * d + l] * k.data[(b * tk + j) * d + l];
          int64_t w = (b * tq + i) * tk + j;
          p[w] = mask && mask->data[w] == 0 ? -9e15 : s * scale;
        }
    std::vector<int64_t> wshape = {batch * tq, tk};
    softmaxInto(p, p, wshape, 1, false);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < tq; ++i) {
        int64_t row = (b * tq + i) * tk;
        std::vector<double> dp(tk);
        double dot = 0; // Σ_j dP_ij P_ij
        for (int64_t j = 0; j < tk; ++j) {
          for (int64_t c = 0; c < dvDim; ++c)
            dp[j] += dO.data[(b * tq + i) * dvDim + c] * v.data[(b * tk + j) * dvDim + c];
          dot += dp[j] * p[row + j];
        }
        for (int64_t j = 0; j < tk; ++j) {
          double pij = p[row + j];
          for (int64_t c = 0; c < dvDim; ++c)
            dv.data[(b * tk + j) * dvDim + c] += pij * dO.data[(b * tq + i) * dvDim + c];
          if (mask && mask->data[row + j] == 0)
            continue; // dS = 0
          double ds = pij * (dp[j] - dot) * scale;
          for (int64_t l = 0; l < d; ++l) {
            dq.data[(b * tq + i) * d + l] += ds * k.data[(b * tk + j) * d + l];
            dk.data[(b * tk + j) * d + l] += ds * q.data[(b * tq + i) * d + l];
          }
        }
      }
    set(op.getDq(), std::move(dq));
    set(op.getDk(), std::move(dk));
    set(op.getDv(), std::move(dv));
    return success();
  }

  LogicalResult conv1d(tf::Conv1dOp op) {
    const HostTensor &x = in(op.getX()), &w = in(op.getWeight());
    const HostTensor *bias = op.getBias() ? &in(op.getBias()) : nullptr;
    HostTensor r = like(op.getType());
    int64_t n = x.shape[0], cin = x.shape[1], width = x.shape[2];
    int64_t cout = w.shape[0], kw = w.shape[2], wout = r.shape[2];
    int64_t pad = op.getPaddingAttr().getInt();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < cout; ++o)
        for (int64_t t = 0; t < wout; ++t) {
          double s = bias ? bias->data[o] : 0.0;
          for (int64_t c = 0; c < cin; ++c)
            for (int64_t j = 0; j < kw; ++j) {
              int64_t src = t + j - pad; // zero padding outside [0, width)
              if (src >= 0 && src < width)
                s += w.data[(o * cin + c) * kw + j] * x.data[(b * cin + c) * width + src];
            }
          r.data[(b * cout + o) * wout + t] = s;
        }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult checkIndex(double id, int64_t limit, StringRef what) {
    if (id < 0 || id >= limit)
      return fail(llvm::formatv("{0}: index {1} is out of range [0, {2})", what,
                                int64_t(id), limit)
                      .str());
    return success();
  }

  LogicalResult oneHot(tf::OneHotOp op) {
    const HostTensor &ids = in(op.getIds());
    HostTensor r = like(op.getType());
    int64_t depth = op.getDepthAttr().getInt();
    for (int64_t i = 0; i < int64_t(ids.data.size()); ++i) {
      if (failed(checkIndex(ids.data[i], depth, "one_hot")))
        return failure();
      r.data[i * depth + int64_t(ids.data[i])] = 1.0;
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult gather(tf::GatherOp op) {
    const HostTensor &table = in(op.getTable()), &ids = in(op.getIds());
    HostTensor r = like(op.getType());
    // Element (id, j) of the lookup is at id * rowStride + j * columnStride.
    bool columns = op.getColumns();
    int64_t rows = table.shape[columns ? 1 : 0], d = table.shape[columns ? 0 : 1];
    int64_t rowStride = columns ? 1 : d, columnStride = columns ? rows : 1;
    for (int64_t i = 0; i < int64_t(ids.data.size()); ++i) {
      if (failed(checkIndex(ids.data[i], rows, "gather")))
        return failure();
      for (int64_t j = 0; j < d; ++j)
        r.data[i * d + j] = table.data[int64_t(ids.data[i]) * rowStride + j * columnStride];
    }
    set(op.getResult(), std::move(r));
    return success();
  }

  LogicalResult crossEntropy(tf::CrossEntropyOp op) {
    const HostTensor &logits = in(op.getLogits()), &labels = in(op.getLabels());
    int64_t axis = op.getAxisAttr().getInt();
    std::vector<double> logp(logits.data.size());
    softmaxInto(logits.data, logp, logits.shape, axis, true);
    auto [outer, n, inner] = around(logits.shape, axis);
    double total = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        double label = labels.data[o * inner + j];
        if (failed(checkIndex(label, n, "cross_entropy label")))
          return failure();
        total -= logp[(o * n + int64_t(label)) * inner + j];
      }
    set(op.getResult(), HostTensor::f32({}, {total / double(outer * inner)}));
    return success();
  }

  // dlogits = (softmax(logits) - one_hot(labels)) g / N, N the label positions.
  LogicalResult crossEntropyGrad(tf::CrossEntropyGradOp op) {
    const HostTensor &logits = in(op.getLogits()), &labels = in(op.getLabels());
    int64_t axis = op.getAxisAttr().getInt();
    HostTensor d = HostTensor::f32(logits.shape, std::vector<double>(logits.data.size()));
    softmaxInto(logits.data, d.data, logits.shape, axis, false);
    auto [outer, n, inner] = around(logits.shape, axis);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        double label = labels.data[o * inner + j];
        if (failed(checkIndex(label, n, "cross_entropy_grad label")))
          return failure();
        d.data[(o * n + int64_t(label)) * inner + j] -= 1.0;
      }
    const double scale = in(op.getGrad()).data[0] / double(outer * inner);
    for (double &v : d.data)
      v *= scale;
    set(op.getResult(), std::move(d));
    return success();
  }

  std::string *error_;
  llvm::DenseMap<Value, HostTensor> env_;
};

} // namespace

FailureOr<std::vector<HostTensor>> interpret(func::FuncOp func,
                                             ArrayRef<HostTensor> args,
                                             std::string *error,
                                             const InterpreterOptions &) {
  return Interpreter(error).run(func, args);
}

} // namespace tfc
