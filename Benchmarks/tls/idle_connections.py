#!/usr/bin/env python3
"""Idle connections to a running larder-server (issue 15): opens COUNT connections (TLS with
--ca, else cleartext), makes one lean-protocol health call on each, and reports the server's
RSS growth per connection; then checks the server still answers: PROBES calls on held
connections picked at random, each timed. Prints one JSON line (`"phase": "held"`) once they
are open, then, with --stop FILE, holds them until FILE exists (or --max-seconds pass: a
caller runs its own load meanwhile), checks them again without blocking (a connection the
server closed reads as end-of-file), probes once more and prints a second line
(`"phase": "released"`). Loopback only; every loop is bounded in count and time.
"""
import argparse
import json
import os
import random
import select
import socket
import ssl
import struct
import sys
import time


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def health_frame(call_id: int) -> bytes:
    # RequestEnvelope{call_id=1 (varint), method=2 (string)} by hand: no larder_client needed.
    method = b"/grpc.health.v1.Health/Check"
    body = bytes([0x08]) + varint(call_id) + bytes([0x12]) + varint(len(method)) + method
    return struct.pack(">I", len(body)) + body


def read_exactly(sock, count: int, deadline: float) -> bytes:
    data = b""
    while len(data) < count:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise RuntimeError("closed by the server")
        data += chunk
    return data


def call(sock, call_id: int, timeout: float = 30.0) -> float:
    """One health call; its round trip in ms."""
    start = time.monotonic()
    deadline = start + timeout
    sock.settimeout(timeout)
    sock.sendall(health_frame(call_id))
    (size,) = struct.unpack(">I", read_exactly(sock, 4, deadline))
    read_exactly(sock, size, deadline)
    return (time.monotonic() - start) * 1000


def probe(sockets: list, count: int, rng: random.Random) -> dict:
    times, failed = [], 0
    for index in range(count):
        try:
            times.append(call(rng.choice(sockets), 1000 + index))
        except (OSError, RuntimeError):
            failed += 1
    times.sort()
    return {"probes": count, "probe_failed": failed,
            "probe_p50_ms": round(times[len(times) // 2], 2) if times else None,
            "probe_max_ms": round(times[-1], 2) if times else None}


def closed_by_server(sockets: list) -> int:
    """Counts sockets that read as end-of-file now (never blocks; bounded reads)."""
    closed = 0
    for sock in sockets:
        readable, _, _ = select.select([sock], [], [], 0) if sock.fileno() < 1024 else ([sock], [], [])
        if not readable:
            continue
        sock.setblocking(False)
        try:
            for _ in range(8):
                if sock.recv(65536) == b"":
                    closed += 1
                    break
        except (BlockingIOError, ssl.SSLWantReadError):
            pass
        except OSError:
            closed += 1
        sock.setblocking(True)
    return closed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True, help="the server's pid (RSS from /proc)")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--ca", help="TLS, verifying the server against this CA (name localhost)")
    parser.add_argument("--probes", type=int, default=100)
    parser.add_argument("--stop", help="hold until this file exists, then check and probe again")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="bound on the whole run")
    args = parser.parse_args()
    started = time.monotonic()
    deadline = started + args.max_seconds
    context = None
    if args.ca:
        context = ssl.create_default_context(cafile=args.ca)
        context.set_alpn_protocols(["larder"])
    rng = random.Random(15)
    before = rss_kib(args.pid)
    sockets, failed = [], 0
    for index in range(args.count):
        if time.monotonic() > deadline:
            break
        try:
            sock = socket.create_connection(("127.0.0.1", args.port), timeout=60)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if context:
                sock = context.wrap_socket(sock, server_hostname="localhost")
            call(sock, 1)
            sockets.append(sock)
        except (OSError, RuntimeError) as error:
            failed += 1
            if failed == 1:
                print(f"idle_connections: connection {index} failed: {error}", file=sys.stderr)
    opened_seconds = time.monotonic() - started
    time.sleep(2)
    after = rss_kib(args.pid)
    opened = len(sockets)
    held = {"phase": "held", "tls": bool(args.ca), "connections": opened, "failed": failed,
            "open_seconds": round(opened_seconds, 1), "rss_before_kib": before, "rss_after_kib": after,
            "kib_per_connection": round((after - before) / opened, 2) if opened else None}
    held.update(probe(sockets, min(args.probes, opened), rng) if opened else {})
    print(json.dumps(held), flush=True)
    if args.stop:
        while not os.path.exists(args.stop) and time.monotonic() < deadline:
            time.sleep(0.2)
        released = {"phase": "released", "connections": opened, "closed_by_server": closed_by_server(sockets),
                    "rss_kib": rss_kib(args.pid)}
        alive = [sock for sock in sockets if sock.fileno() >= 0]
        released.update(probe(alive, min(args.probes, len(alive)), rng) if alive else {})
        print(json.dumps(released), flush=True)
    for sock in sockets:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
