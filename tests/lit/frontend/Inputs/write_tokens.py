"""write_tokens.py OUT.npy ROWS v0 v1 ...: an int32 .npy of ROWS rows (no numpy)."""
import struct
import sys

out, rows, values = sys.argv[1], int(sys.argv[2]), [int(v) for v in sys.argv[3:]]
cols = len(values) // rows
header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%di" % len(values), *values))
