# Bytes that are not printable never reach the terminal raw: the source line
# and the message show them as \xNN (lower-case hex), and the caret stays
# under its character. check_terminal_safe.py fails on any raw control byte.
#
# An ESC (a terminal escape sequence) where the lexer stops:
# RUN: printf 'model m {\n  input x: f32[2]\n  let y = x \033[31m x\n}\n' > %t.esc.tf
# RUN: not tfc compile %t.esc.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --caret-under '\' | FileCheck %s --check-prefix=ESC
# ESC: esc.tf:3:13: error: unexpected character byte 0x1b
# ESC-NEXT: {{^}}  let y = x \x1b[31m x{{$}}
# ESC-NEXT: {{^}}            ^{{$}}
#
# Control bytes in a string before the error: the caret moves right by the
# width of their escapes.
# RUN: printf 'model m {\n  input x: f32[2]\n  let y = linear(x, 2, name: "a\033]0;pwned\007\010b") $ x\n}\n' > %t.string.tf
# RUN: not tfc compile %t.string.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --caret-under '$' | FileCheck %s --check-prefix=STRING
# STRING: string.tf:3:47: error: unexpected character '$'
# STRING-NEXT: {{^}}  let y = linear(x, 2, name: "a\x1b]0;pwned\x07\x08b") $ x{{$}}
# STRING-NEXT: {{^}}                                                ^{{$}}
#
# Valid UTF-8 that is not printable (a right-to-left override, U+202E, and
# the C1 control CSI, U+009B) and invalid UTF-8 are escaped byte by byte.
# RUN: printf 'model m {\n  input x: f32[2]\n  let y = linear(x, 2, name: "\342\200\256ab\302\233\377") $ x\n}\n' > %t.unicode.tf
# RUN: not tfc compile %t.unicode.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --caret-under '$' | FileCheck %s --check-prefix=UNICODE
# UNICODE: unicode.tf:3:42: error: unexpected character '$'
# UNICODE-NEXT: {{^}}  let y = linear(x, 2, name: "\xe2\x80\xaeab\xc2\x9b\xff") $ x{{$}}
# UNICODE-NEXT: {{^}}                                                       ^{{$}}
