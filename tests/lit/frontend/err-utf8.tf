# RUN: not tfc compile %s 2>&1 | %python %S/Inputs/check_terminal_safe.py --caret-under '$' | FileCheck %s
# Printable UTF-8 in comments and strings (café, naïve) is shown as it is, and
# the caret after it is aligned in display columns, not bytes.
model m {
  input x: f32[2]
  # CHECK: err-utf8.tf:[[@LINE+3]]:46: error: unexpected character '$'
  # CHECK-NEXT: {{^}}  let y = linear(x, 2, name: "café_naïve") $ x{{$}}
  # CHECK-NEXT: {{^}}                                          ^{{$}}
  let y = linear(x, 2, name: "café_naïve") $ x
}
