# A long source line (here 400 KB) is not printed whole: a window of at most
# 120 columns around the caret, "..." on each side that was cut.
#
# The error in the middle: cut on both sides.
# RUN: %python -c "import sys; sys.stdout.write('model m {\n  input x: f32[2]\n  let y = x' + ' + x' * 50000 + ' $ ' + 'x + ' * 50000 + 'x\n}\n')" > %t.middle.tf
# RUN: not tfc compile %t.middle.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-width 120 --max-lines 3 --caret-under '$' | FileCheck %s --check-prefix=MIDDLE
# MIDDLE: middle.tf:3:200013: error: unexpected character '$'
# MIDDLE-NEXT: {{^\.\.\.[x +]+ \$ [x +]+\.\.\.$}}
# MIDDLE-NEXT: {{^ +\^$}}
#
# Near the start: cut on the right only.
# RUN: %python -c "import sys; sys.stdout.write('model m {\n  input x: f32[2]\n  let y = x $ x' + ' + x' * 100000 + '\n}\n')" > %t.start.tf
# RUN: not tfc compile %t.start.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-width 120 --max-lines 3 --caret-under '$' | FileCheck %s --check-prefix=START
# START: start.tf:3:13: error: unexpected character '$'
# START-NEXT: {{^  let y = x \$ x [x +]+\.\.\.$}}
# START-NEXT: {{^            \^$}}
#
# At the end: cut on the left only.
# RUN: %python -c "import sys; sys.stdout.write('model m {\n  input x: f32[2]\n  let y = ' + 'x + ' * 100000 + 'x $\n}\n')" > %t.end.tf
# RUN: not tfc compile %t.end.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-width 120 --max-lines 3 --caret-under '$' | FileCheck %s --check-prefix=END
# END: end.tf:3:400013: error: unexpected character '$'
# END-NEXT: {{^\.\.\.[x +]+ x \$$}}
# END-NEXT: {{^ +\^$}}
#
# A long run of control bytes: escaped, and cut just the same.
# RUN: %python -c "import sys; sys.stdout.write('model m {\n  input x: f32[2]\n  let y = linear(x, 2, name: \"' + '\x1b' * 100000 + '\") $ x\n}\n')" > %t.esc.tf
# RUN: not tfc compile %t.esc.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-width 120 --max-lines 3 --caret-under '$' | FileCheck %s --check-prefix=ESC
# ESC: esc.tf:3:100034: error: unexpected character '$'
# ESC-NEXT: {{^\.\.\.(\\x1b)+"\) \$ x$}}
# ESC-NEXT: {{^ +\^$}}
