// RUN: not tfc compile %s --emit=mlir 2>&1 | %python %S/Inputs/check_terminal_safe.py | FileCheck %s
// A location in a file that is not loaded (so no source line) is printed by
// MLIR's diagnostic handler itself: its file name, with an ESC, is escaped too.
// CHECK: x\x1b[31m.tf:1:1: error: unregistered operation 'tf.bogus'
// CHECK: x\x1b[31m.tf:1:1: note: see current operation
module {
  func.func @f() {
    "tf.bogus"() : () -> () loc("x\1B[31m.tf":1:1)
    return
  }
}
