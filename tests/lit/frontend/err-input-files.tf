# Inputs that are not .tf programs: exit status 1, one error, nothing printed
# raw. check_terminal_safe.py fails on raw control bytes and on more lines
# than --max-lines (the error, the source line, the caret).
#
# NUL bytes:
# RUN: printf 'model m {\000}\n' > %t.nul.tf
# RUN: not tfc compile %t.nul.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-lines 3 --caret-under '\' | FileCheck %s --check-prefix=NUL
# NUL: nul.tf:1:10: error: unexpected character byte 0x00
# NUL-NEXT: {{^}}model m {\x00}{{$}}
# NUL-NEXT: {{^}}         ^{{$}}
#
# A binary (an ELF header, then every byte value):
# RUN: %python -c "import sys; sys.stdout.buffer.write(b'\x7fELF\x02\x01\x01\x00' + bytes(range(256)) * 1024)" > %t.bin.tf
# RUN: not tfc compile %t.bin.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-width 120 --max-lines 3 --caret-under '\' | FileCheck %s --check-prefix=BINARY
# BINARY: bin.tf:1:1: error: unexpected character byte 0x7f
# BINARY-NEXT: {{^}}\x7fELF\x02\x01\x01\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08{{ +$}}
# BINARY-NEXT: {{^}}^{{$}}
#
# An empty file: the error alone (no empty source line and caret).
# RUN: printf '' > %t.empty.tf
# RUN: not tfc compile %t.empty.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-lines 1 | FileCheck %s --check-prefix=EMPTY
# EMPTY: empty.tf:1:1: error: expected a 'model' block before the end of the file: the file has none
#
# A directory, a path that does not exist, and a file name with an ESC in it
# (exit status exactly 1):
# RUN: rm -rf %t.dir && mkdir -p %t.dir
# RUN: not tfc compile %t.dir 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-lines 1 | FileCheck %s --check-prefix=DIR
# DIR: tfc: error: cannot open input file '{{.*}}.dir': Is a directory
# RUN: not tfc compile %t.missing.tf 2>&1 | %python %S/Inputs/check_terminal_safe.py --max-lines 1 | FileCheck %s --check-prefix=MISSING
# MISSING: tfc: error: cannot open input file '{{.*}}missing.tf': No such file or directory
# RUN: %python -c "import subprocess, sys; r = subprocess.run(['tfc', 'compile', 'no\x1b[2Jsuch.tf'], stderr=subprocess.PIPE); sys.stdout.buffer.write(r.stderr); sys.exit(r.returncode != 1)" | %python %S/Inputs/check_terminal_safe.py --max-lines 1 | FileCheck %s --check-prefix=NAME
# NAME: tfc: error: cannot open input file 'no\x1b[2Jsuch.tf': No such file or directory
