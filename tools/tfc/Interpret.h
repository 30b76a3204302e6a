//===- Interpret.h - `tfc interpret`: one entry through the oracle --------===//
//
// Runs one entry of a model (predict, train_step, grad_step, ...) through
// the reference interpreter in double precision, with the compiled binary's
// `run` command line: the same parameters file, the same KIND:NAME=FILE.npy
// feeds, the results as DIR/KIND.NAME.npy. So any compiled result can be put
// beside the oracle's (tools/gpu/parity.py's arbiter of a ReLU flip).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_INTERPRET_H
#define TFC_TOOLS_TFC_INTERPRET_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace tfc {

struct InterpretRequest {
  std::string entry;              // e.g. train_step
  std::string params;             // a safetensors file of every parameter
  std::vector<std::string> feeds; // KIND:NAME=FILE.npy (an input: NAME=FILE.npy too)
  std::string outputDir;          // where KIND.NAME.npy go
};

/// The passes that give `module` (a model as the front end built it) its
/// entries at the tf level: autodiff with the data-parallel halves, then the
/// entry points. What `interpretEntry` runs.
mlir::LogicalResult buildEntries(mlir::ModuleOp module);

/// Runs the request's entry of `module` (after buildEntries) and writes its
/// results: f32 ones as float64 ('<f8'), i32 and i1 as the binary writes
/// them. 0, or 1 with a message on stderr (a missing or misshapen feed, an
/// unknown entry, a feed no argument takes).
int interpretEntry(mlir::ModuleOp module, const InterpretRequest &request);

} // namespace tfc

#endif // TFC_TOOLS_TFC_INTERPRET_H
