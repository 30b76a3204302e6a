# Inputs that are not programs end in one error and exit status 1, never a crash.
# RUN: printf '' > %t.empty.tf
# RUN: not tfc compile %t.empty.tf 2>&1 | FileCheck %s --check-prefix=EMPTY
# EMPTY: error: expected a 'model' block before the end of the file
# RUN: printf 'model m {\000}' > %t.nul.tf
# RUN: not tfc compile %t.nul.tf 2>&1 | FileCheck %s --check-prefix=NUL
# NUL: nul.tf:1:10: error: unexpected character byte 0x00
# RUN: %python -c "import sys; sys.stdout.write('model m {\n  let ' + 'a' * 1000000 + ' = 1\n  output ' + 'a' * 999999 + '\n}\n')" > %t.long.tf
# RUN: not tfc compile %t.long.tf 2>&1 | FileCheck %s --check-prefix=LONG
# LONG: long.tf:3:10: error: unknown name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'
# RUN: %python -c "import sys; sys.stdout.buffer.write(bytes(range(256)) * 64)" > %t.bin.tf
# RUN: not tfc compile %t.bin.tf 2>&1 | FileCheck %s --check-prefix=BINARY
# BINARY: bin.tf:1:1: error: unexpected character byte 0x00
# RUN: %python -c "print('model m {\n  param x = ' + '-' * 500000 + '1\n}')" > %t.minus.tf
# RUN: tfc compile %t.minus.tf --emit=mlir | FileCheck %s --check-prefix=MINUS
# MINUS: func.func @m()
