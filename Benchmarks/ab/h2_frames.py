#!/usr/bin/env python3
"""Counts the HTTP/2 frames a server read and wrote, by type, from strace output of its socket I/O:

    strace -f -p PID -xx -s 70000 -e trace=read,write,sendto,recvfrom -o OUT   (a few seconds, mid-run)
    Benchmarks/ab/h2_frames.py OUT

Per file descriptor and direction the bytes are parsed as a frame stream (the client preface
skipped); a stream that does not parse (strace attached mid-frame) is dropped and counted as a
resync. Used for docs/BENCHMARKS.md "Why the gRPC C++ client doubles Larder's cost per call"."""
import re, sys, collections
TYPES = {0:"DATA",1:"HEADERS",2:"PRIORITY",3:"RST_STREAM",4:"SETTINGS",5:"PUSH_PROMISE",6:"PING",7:"GOAWAY",8:"WINDOW_UPDATE",9:"CONTINUATION"}
line_re = re.compile(r'^(?:\d+\s+)?(read|write|recvfrom|sendto|writev|sendmsg)\((\d+), "((?:\\x[0-9a-f]{2})*)"')
buf = collections.defaultdict(bytearray)
counts = collections.Counter()
sizes = collections.Counter()
ops = collections.Counter()
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
bad = collections.Counter()
wu = collections.Counter()
def parse(key):
    b = buf[key]
    i = 0
    if b.startswith(PREFACE): i = len(PREFACE)
    while len(b) - i >= 9:
        length = int.from_bytes(b[i:i+3], "big"); t = b[i+3]; flags = b[i+4]
        sid = int.from_bytes(b[i+5:i+9], "big") & 0x7fffffff
        if t > 9 or length > 1 << 20:
            bad[key[1]] += 1; del b[:]; return
        if len(b) - i < 9 + length: break
        name = TYPES[t]
        if t == 8: wu[(key[1], "conn" if sid == 0 else "stream")] += 1
        if t == 4 and flags & 1: name = "SETTINGS_ACK"
        if t == 6 and flags & 1: name = "PING_ACK"
        if t in (0, 1) and flags & 1: name += "+END"
        counts[(key[1], name)] += 1
        i += 9 + length
    del b[:i]
for line in open(sys.argv[1], errors="replace"):
    m = line_re.match(line)
    if not m: continue
    op, fd, hexs = m.groups()
    data = bytes(int(h, 16) for h in re.findall(r'\\x([0-9a-f]{2})', hexs))
    direction = "in" if op in ("read", "recvfrom") else "out"
    if len(data) in (0, 8): continue  # nothing, or an eventfd's counter (the loop's wake-ups)
    ops[(direction, op)] += 1
    key = (fd, direction)
    buf[key] += data
    parse(key)
for k, v in sorted(counts.items()): print(f"{k[0]:4} {k[1]:18} {v}")
print("ops", dict(ops)); print("window updates", dict(wu)); print("resyncs", dict(bad))
