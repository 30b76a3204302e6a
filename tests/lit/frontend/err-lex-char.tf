# RUN: not tfc compile %s 2>&1 | FileCheck %s
# A character outside the language, with the source line and a caret.
model m {
  input x: f32[2]
  # CHECK: err-lex-char.tf:[[@LINE+3]]:13: error: unexpected character '$'
  # CHECK-NEXT: {{^}}  let y = x $ x
  # CHECK-NEXT: {{^}}            ^
  let y = x $ x
}
