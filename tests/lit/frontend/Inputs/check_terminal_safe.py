"""check_terminal_safe.py [--max-width N] [--max-lines N] [--caret-under C]

Reads diagnostics on stdin and writes them unchanged to stdout (for
FileCheck), after checking that they are safe to print on a terminal:
  - no byte below 0x20 but '\\n', no DEL (0x7f), and valid UTF-8 (so no
    lone C1 control bytes);
  - --max-width N: no line wider than N characters, not counting the
    "PATH:LINE:COL: " that starts a diagnostic (the path is the user's and
    as long as the directory it lies in: the width is what tfc prints);
  - --max-lines N: at most N lines;
  - --caret-under C: every caret line (blanks, then '^', then '~'s) has its
    '^' under the character C of the line above (a column of characters:
    the tests use no wide characters before a caret they check this way).
Exits 1, saying what it found, otherwise.
"""
import argparse
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--max-width", type=int)
parser.add_argument("--max-lines", type=int)
parser.add_argument("--caret-under")
args = parser.parse_args()

data = sys.stdin.buffer.read()
errors = []
bad = sorted({b for b in data if (b < 0x20 and b != 0x0A) or b == 0x7F})
if bad:
    errors.append("raw control bytes: " + ", ".join("0x%02x" % b for b in bad))
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    errors.append("invalid UTF-8: " + str(e))
    text = data.decode("utf-8", "replace")
lines = text.split("\n")
if lines and lines[-1] == "":
    lines.pop()
if args.max_lines is not None and len(lines) > args.max_lines:
    errors.append("%d lines, more than %d" % (len(lines), args.max_lines))
if args.max_width is not None:
    for i, line in enumerate(lines):
        width = len(re.sub(r"^[^\n]*?:\d+:\d+: (?=(error|warning|note): )", "", line, count=1))
        if width > args.max_width:
            errors.append("line %d is %d characters wide" % (i + 1, width))
if args.caret_under is not None:
    carets = 0
    for i, line in enumerate(lines):
        if i == 0 or not re.fullmatch(r" *\^~*", line):
            continue
        carets += 1
        col = line.index("^")
        above = lines[i - 1]
        under = above[col] if col < len(above) else "end of line"
        if under != args.caret_under:
            errors.append("line %d: the caret is under %r, not %r" % (i + 1, under, args.caret_under))
    if carets == 0:
        errors.append("no caret line")
if errors:
    sys.stderr.write("check_terminal_safe.py: " + "; ".join(errors[:10]) + "\n")
    sys.exit(1)
sys.stdout.write(text)
