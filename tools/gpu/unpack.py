#!/usr/bin/env python3
"""unpack.py ARCHIVE DEST: tools/gpu/pack.sh's archive into DEST (the build
directory), with Python's own xz: the GPU machine needs no xz tool."""
import sys
import tarfile

archive, dest = sys.argv[1], sys.argv[2]
with tarfile.open(archive, "r:xz") as tar:
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
    else:
        tar.extractall(dest)
print(f"unpacked {archive} into {dest}")
