//===- CompileInParts.cpp - O3 and code generation on every core ----------===//
//
// LLVM's O3 and instruction selection take most of `tfc compile`, and both
// work one function at a time; a train step is a hundred functions (its
// entry, one per distinct loop nest). The module is cut into parts of about
// equal size, each part cloned into its own LLVMContext (through bitcode,
// since a context is single-threaded) and optimised and compiled on its own
// thread; the parts' objects are linked together.
//
// A function and what it may inline stay in one part, so no optimisation
// is lost: loop bodies are outlined `noinline` or called through the
// runtime's pool by pointer, and the rest goes with its caller.
//
// --emit=llvm, --emit=obj and --dump-ir see the same code: the parts'
// optimised IR linked back into one module (O3 on the whole module instead
// spent 20 s in the SLP vectoriser on the encoder-decoder's entries, and
// over a minute with 8 encoder layers, against 1 s for the parts).
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/cpu/Pipeline.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Analysis/CFG.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <atomic>
#include <thread>

using namespace llvm;

namespace {

bool hasLoop(const Function &function) {
  SmallVector<std::pair<const BasicBlock *, const BasicBlock *>> backEdges;
  FindFunctionBackedges(function, backEdges);
  return !backEdges.empty();
}

/// How the module is cut: which part defines each global value, and which
/// parts are straight-line code (entries: calls and context stores, every
/// loop outlined), which want no vectoriser and no careful instruction
/// selection: O3's SLP vectoriser and SelectionDAG spend seconds on an
/// entry's thousands of stores for code that runs once a step.
struct Cut {
  unsigned parts = 0;
  DenseMap<const GlobalValue *, unsigned> partOf;
  SmallVector<bool> straight;
};

/// `loopParts` parts of about equal size for the functions with loops (a
/// function and the functions it may inline form one group), one more for
/// the straight-line groups.
Cut cutModule(Module &module, unsigned loopParts) {
  EquivalenceClasses<const GlobalValue *> groups;
  for (Function &function : module) {
    if (function.isDeclaration())
      continue;
    groups.insert(&function);
    for (Instruction &inst : instructions(function))
      if (auto *call = dyn_cast<CallBase>(&inst))
        if (Function *callee = call->getCalledFunction())
          if (!callee->isDeclaration() && !callee->hasFnAttribute(Attribute::NoInline))
            groups.unionSets(&function, callee);
  }
  struct Group {
    const GlobalValue *leader;
    uint64_t size;
    bool straight;
  };
  SmallVector<Group> sized;
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    if (!it->isLeader())
      continue;
    Group group{it->getData(), 0, true};
    for (auto member = groups.member_begin(it); member != groups.member_end(); ++member) {
      auto *function = cast<Function>(*member);
      group.size += function->getInstructionCount();
      group.straight &= !hasLoop(*function);
    }
    sized.push_back(group);
  }
  // Largest first, each to the lightest part; ties by module order, so the
  // cut (and the objects) do not depend on pointer values.
  DenseMap<const GlobalValue *, unsigned> order;
  for (Function &function : module)
    order[&function] = order.size();
  llvm::stable_sort(sized, [&](const Group &a, const Group &b) {
    return a.size != b.size ? a.size > b.size : order[a.leader] < order[b.leader];
  });
  Cut cut;
  cut.parts = loopParts + 1;
  cut.straight.assign(cut.parts, false);
  cut.straight[loopParts] = true;
  SmallVector<uint64_t> load(loopParts, 0);
  for (const Group &group : sized) {
    unsigned part = loopParts;
    if (!group.straight) {
      part = std::min_element(load.begin(), load.end()) - load.begin();
      load[part] += group.size + 1;
    }
    for (auto member = groups.findLeader(group.leader); member != groups.member_end(); ++member)
      cut.partOf[*member] = part;
  }
  // Global variables (the manifest, constants) live with the entries.
  for (GlobalVariable &global : module.globals())
    cut.partOf[&global] = loopParts;
  return cut;
}

} // namespace

bool tfc::compileInParts(Module &module, unsigned threads, CompiledParts &out, std::string &error,
                         const CpuTarget &target) {
  threads = std::max(1u, threads);
  // Smaller parts than threads, so that no thread waits long on another.
  unsigned parts = threads == 1 ? 1 : 4 * threads;
  // Symbols local to the module are referenced across parts once it is cut:
  // they become hidden (still invisible outside the executable) and named.
  unsigned anonymous = 0;
  for (GlobalValue &value : module.global_values()) {
    if (!value.hasName())
      value.setName("tfc.anon." + Twine(anonymous++));
    if (value.hasLocalLinkage()) {
      value.setLinkage(GlobalValue::ExternalLinkage);
      value.setVisibility(GlobalValue::HiddenVisibility);
    }
  }
  Cut cut = cutModule(module, parts);
  parts = cut.parts;

  // Each part as bitcode: the one form another context can read.
  std::vector<SmallVector<char, 0>> bitcode(parts);
  for (unsigned part = 0; part < parts; ++part) {
    ValueToValueMapTy map;
    std::unique_ptr<Module> clone = CloneModule(module, map, [&](const GlobalValue *value) {
      auto it = cut.partOf.find(value);
      return it != cut.partOf.end() && it->second == part;
    });
    raw_svector_ostream os(bitcode[part]);
    WriteBitcodeToFile(*clone, os);
  }

  // Target machines are made here: target registration is not thread-safe.
  // A default CpuTarget (no CPU resolved) is the host's, as --cpu=native.
  CpuTarget cpu = target;
  if (cpu.cpu.empty() && !resolveCpuTarget(cpu.name, {}, cpu, error))
    return false;
  std::vector<std::unique_ptr<TargetMachine>> machines;
  for (unsigned part = 0; part < parts; ++part) {
    machines.push_back(createTargetMachine(
        cpu, error, cut.straight[part] ? CodeGenOptLevel::None : CodeGenOptLevel::Aggressive));
    if (!machines.back())
      return false;
  }
  out.straight.assign(cut.straight.begin(), cut.straight.end());
  out.objects.assign(out.wantObjects ? parts : 0, {});
  out.bitcode.assign(out.wantOptimizedIR ? parts : 0, {});
  std::vector<std::string> errors(parts);
  auto compilePart = [&](unsigned part) {
    LLVMContext context;
    Expected<std::unique_ptr<Module>> parsed = parseBitcodeFile(
        MemoryBufferRef(StringRef(bitcode[part].data(), bitcode[part].size()), "part"), context);
    if (!parsed) {
      errors[part] = toString(parsed.takeError());
      return;
    }
    if (cut.straight[part])
      optimizeStraightLine(**parsed, *machines[part]);
    else
      optimizeModule(**parsed, *machines[part]);
    if (out.wantOptimizedIR) {
      raw_svector_ostream os(out.bitcode[part]);
      WriteBitcodeToFile(**parsed, os);
    }
    if (out.wantObjects) {
      raw_svector_ostream os(out.objects[part]);
      emitObjectFile(**parsed, *machines[part], os, errors[part]);
    }
  };
  // `threads` workers take the parts in turn, the entries' part first.
  std::atomic<unsigned> next{0};
  auto work = [&] {
    for (unsigned i; (i = next++) < parts;)
      compilePart(parts - 1 - i);
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
  for (const std::string &message : errors)
    if (!message.empty()) {
      error = message;
      return false;
    }
  return true;
}

std::unique_ptr<Module> tfc::joinOptimizedParts(const CompiledParts &parts, const Module &original,
                                                LLVMContext &context, bool forOneObject,
                                                std::string &error) {
  std::unique_ptr<Module> joined;
  for (size_t part = 0; part < parts.bitcode.size(); ++part) {
    const SmallVector<char, 0> &bytes = parts.bitcode[part];
    Expected<std::unique_ptr<Module>> parsed =
        parseBitcodeFile(MemoryBufferRef(StringRef(bytes.data(), bytes.size()), "part"), context);
    if (!parsed) {
      error = toString(parsed.takeError());
      return nullptr;
    }
    if (forOneObject && parts.straight[part])
      for (Function &function : **parsed)
        if (!function.isDeclaration()) {
          // The entries' bodies are alwaysinline (their wrapper's), which
          // optnone's noinline excludes; nothing inlines them any more.
          function.removeFnAttr(Attribute::AlwaysInline);
          function.addFnAttr(Attribute::OptimizeNone);
          function.addFnAttr(Attribute::NoInline);
        }
    if (!joined) {
      joined = std::move(*parsed);
    } else if (Linker::linkModules(*joined, std::move(*parsed))) {
      error = "cannot link the optimised parts into one module";
      return nullptr;
    }
  }
  if (!joined) {
    error = "no optimised parts to join";
    return nullptr;
  }
  std::string broken;
  raw_string_ostream why(broken);
  if (verifyModule(*joined, &why)) {
    error = "the optimised parts joined do not verify: " + broken;
    return nullptr;
  }
  // The functions in the translated module's order, not the parts', and
  // those O3 declared (intrinsics) after them by name: the same text
  // whatever the cut (which depends on the cores).
  DenseMap<StringRef, size_t> position;
  for (const Function &function : original)
    position.try_emplace(function.getName(), position.size());
  std::vector<Function *> functions;
  for (Function &function : *joined)
    functions.push_back(&function);
  auto rank = [&](Function *function) {
    auto it = position.find(function->getName());
    return it == position.end() ? position.size() : it->second;
  };
  llvm::stable_sort(functions, [&](Function *a, Function *b) {
    size_t ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : ra == position.size() && a->getName() < b->getName();
  });
  for (Function *function : functions) {
    function->removeFromParent();
    joined->getFunctionList().push_back(function);
  }
  return joined;
}
