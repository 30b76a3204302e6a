#!/usr/bin/env python3
"""Checks every relative link, and its #anchor, in README.md and docs/*.md.

Usage: docs/check-links.py [REPO_ROOT]   (ninja -C build check-tfc-docs)
"""
import os, re, sys, glob
root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
files = [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs', '*.md')))
link = re.compile(r'(?<!!)\[[^\]]*\]\(([^)\s]+)\)')
def slug(h):
    h = h.strip().lower()
    h = re.sub(r'[^\w\- ]', '', h)  # GitHub: drop punctuation, keep word chars, '-', ' '
    return h.replace(' ', '-')
def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
        if not fence and line.startswith('#'):
            out.add(slug(line.lstrip('#')))
    return out
bad = 0
for f in files:
    text = open(f, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)  # no links inside code blocks
    for target in link.findall(text):
        if re.match(r'[a-z]+:', target):
            continue
        path, _, anchor = target.partition('#')
        dest = f if not path else os.path.normpath(os.path.join(os.path.dirname(f), path))
        if not os.path.exists(dest):
            print(f'{f}: missing file {target}'); bad += 1; continue
        if anchor and dest.endswith('.md') and anchor not in anchors(dest):
            print(f'{f}: missing anchor {target}'); bad += 1
print(f'{len(files)} files, {bad} broken links')
sys.exit(1 if bad else 0)
