"""exit_status.py WANT CMD...: runs CMD, prints its stdout and stderr, and
succeeds only if CMD's exit status is exactly WANT (lit's `not` accepts any
failure)."""
import subprocess
import sys

want = int(sys.argv[1])
result = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.buffer.write(result.stdout)
if result.returncode != want:
    sys.stderr.write(f"exit status {result.returncode}, expected {want}\n")
    sys.exit(1)
