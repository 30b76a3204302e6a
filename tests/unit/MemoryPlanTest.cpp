//===- MemoryPlanTest.cpp - the arena plan never aliases live buffers -----===//
//
// Runs the CPU pipeline to buffers on every seed model and checks the plan
// from the outside: each arena view's live range is recomputed from the IR
// (every op using the view or anything derived from it, and every GEMM call
// whose pointer arguments land inside it), and any two views whose bytes
// overlap must have disjoint live ranges.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Registration.h"
#include "compiler/frontend/Parser.h"
#include "compiler/lowering/cpu/Pipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <optional>

using namespace mlir;

namespace {

struct PlannedBuffer {
  int64_t offset = 0, bytes = 0, first = 0, last = 0;
};

/// The byte-shift value a pointer is built from, when the index value is
/// extract_aligned_pointer_as_index(arena) + shift (+ constants): the plan
/// gives every view its own shift constant, so this names the buffer.
std::optional<Value> arenaShift(Value v, Value arena) {
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  if (auto base = add.getLhs().getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>())
    return base.getSource() == arena ? std::optional<Value>(add.getRhs()) : std::nullopt;
  return arenaShift(add.getLhs(), arena);
}

class MemoryPlan : public ::testing::TestWithParam<const char *> {};

TEST_P(MemoryPlan, BuffersLiveAtTheSameTimeNeverShareBytes) {
  DialectRegistry registry;
  tfc::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string path = std::string(TFC_SOURCE_DIR) + "/models/" + GetParam() + ".tf";
  auto file = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(file)) << path;
  tfc::FrontendOptions options;
  options.batch = 2;
  OwningOpRef<ModuleOp> module =
      tfc::parseTfSource((*file)->getBuffer(), path, context, options).module;
  ASSERT_TRUE(module);
  PassManager pm(&context);
  tfc::addFusionPasses(pm);
  tfc::addCpuLinalgPasses(pm);
  tfc::addCpuBufferPasses(pm);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto predict = module->lookupSymbol<func::FuncOp>("predict");
  ASSERT_TRUE(predict);
  Block &block = predict.getBody().front();
  Value arena = predict.getArguments().back();

  DenseMap<Operation *, int64_t> position;
  int64_t index = 0;
  for (Operation &op : block)
    position[&op] = index++;

  std::vector<PlannedBuffer> buffers;
  DenseMap<Operation *, size_t> bufferOf;
  int64_t total = 0;
  for (Operation &op : block) {
    auto view = dyn_cast<memref::ViewOp>(&op);
    if (!view || view.getSource() != arena)
      continue;
    auto shift = view.getByteShift().getDefiningOp<arith::ConstantIndexOp>();
    ASSERT_TRUE(shift);
    MemRefType type = view.getType();
    PlannedBuffer b;
    b.offset = shift.value();
    b.bytes = type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    b.first = b.last = position[&op];
    SmallVector<Value> worklist = {view.getResult()};
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (Operation *user : v.getUsers()) {
        b.last = std::max(b.last, position[block.findAncestorOpInBlock(*user)]);
        for (Value r : user->getResults())
          worklist.push_back(r);
      }
    }
    total += b.bytes;
    bufferOf[&op] = buffers.size();
    buffers.push_back(b);
  }
  // GEMM calls reach buffers through pointers built from the view's shift.
  DenseMap<Value, size_t> bufferOfShift;
  for (auto [op, i] : bufferOf)
    bufferOfShift[cast<memref::ViewOp>(op).getByteShift()] = i;
  int64_t calls = 0;
  predict.walk([&](func::CallOp call) {
    for (Value arg : call.getArgOperands()) {
      std::optional<Value> shift = arenaShift(arg, arena);
      if (!shift)
        continue;
      ++calls;
      auto it = bufferOfShift.find(*shift);
      ASSERT_TRUE(it != bufferOfShift.end()) << "a pointer into the arena outside any buffer";
      PlannedBuffer &b = buffers[it->second];
      b.last = std::max(b.last, position[block.findAncestorOpInBlock(*call)]);
    }
  });
  int64_t gemms = 0;
  predict.walk([&](func::CallOp call) { gemms += call.getCallee() == "tfc_sgemm"; });
  if (gemms > 0) {
    EXPECT_GT(calls, 0) << "no GEMM pointer traced to the arena: the check would be vacuous";
  }

  auto arenaBytes = predict->getAttrOfType<IntegerAttr>(tfc::kArenaBytesAttr);
  ASSERT_TRUE(arenaBytes);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlannedBuffer &a = buffers[i];
    EXPECT_LE(a.offset + a.bytes, arenaBytes.getInt());
    EXPECT_EQ(a.offset % 64, 0);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const PlannedBuffer &b = buffers[j];
      bool sharesBytes = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      bool liveTogether = a.first <= b.last && b.first <= a.last;
      EXPECT_FALSE(sharesBytes && liveTogether)
          << "buffers " << i << " [" << a.offset << ", +" << a.bytes << ") live " << a.first
          << "-" << a.last << " and " << j << " [" << b.offset << ", +" << b.bytes
          << ") live " << b.first << "-" << b.last;
    }
  }
  // The plan reuses memory: the arena is smaller than all buffers laid end to end.
  EXPECT_LT(arenaBytes.getInt(), total);
}

INSTANTIATE_TEST_SUITE_P(Models, MemoryPlan,
                         ::testing::Values("reverse", "set_anomaly", "fleuret_cnn",
                                           "fleuret_attention", "encoder_decoder"));

} // namespace
