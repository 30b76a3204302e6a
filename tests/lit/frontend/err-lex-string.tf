# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2]
  # CHECK: err-lex-string.tf:[[@LINE+1]]:30: error: unterminated string
  let y = linear(x, 2, name: "proj)
}
