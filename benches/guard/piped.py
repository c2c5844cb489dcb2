#!/usr/bin/env python3
"""Runs a command with its stdin and stdout on pipes, the way MCP hosts start stdio servers,
for benches/callgrind-guard.sh.

usage: piped.py INPUT OUTPUT COMMAND...

INPUT is written whole into a 1 MiB pipe before COMMAND starts, and closed; COMMAND writes
into a 1 MiB pipe that is copied to OUTPUT. Every read the server makes then finds its bytes
waiting (and every write room), whatever the timing: the count of its instructions does not
depend on when the other end runs. Exits with COMMAND's status.
"""
import fcntl
import os
import subprocess
import sys

F_SETPIPE_SZ = 1031
inp, outp, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
data = open(inp, 'rb').read()
r, w = os.pipe()
size = fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
if len(data) > size:
    sys.exit(f'piped.py: {len(data)} bytes of input do not fit a pipe of {size}: fewer requests')
with os.fdopen(w, 'wb') as f:
    f.write(data)
out_r, out_w = os.pipe()
fcntl.fcntl(out_w, F_SETPIPE_SZ, 1 << 20)
p = subprocess.Popen(cmd, stdin=r, stdout=out_w)
os.close(r)
os.close(out_w)
written = 0
with open(outp, 'wb') as out, os.fdopen(out_r, 'rb') as src:
    while chunk := src.read1(1 << 16):
        written += len(chunk)
        out.write(chunk)
if written > size:
    print(f'piped.py: {written} bytes of output overflowed the pipe of {size}: fewer requests', file=sys.stderr)
    sys.exit(1)
sys.exit(p.wait())
