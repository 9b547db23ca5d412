#!/usr/bin/env python3
"""Memory per idle connection of a running larder-server: opens N connections (TLS with
--ca, else cleartext), makes one call on each, waits, and reports the server's RSS growth
per connection, then checks that the server still answers. One JSON line on stdout."""
import argparse
import json
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


def health_frame(call_id: int) -> bytes:
    # RequestEnvelope{call_id=1 (varint), method=2 (string)} by hand: no larder_client needed.
    method = b"/grpc.health.v1.Health/Check"
    body = bytes([0x08]) + varint(call_id) + bytes([0x12]) + varint(len(method)) + method
    return struct.pack(">I", len(body)) + body


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


def read_frame(sock) -> bytes:
    header = b""
    while len(header) < 4:
        chunk = sock.recv(4 - len(header))
        if not chunk:
            raise RuntimeError("closed")
        header += chunk
    (size,) = struct.unpack(">I", header)
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            raise RuntimeError("closed")
        body += chunk
    return body


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--ca")
    args = parser.parse_args()
    context = None
    if args.ca:
        context = ssl.create_default_context(cafile=args.ca)
        context.set_alpn_protocols(["larder"])
    before = rss_kib(args.pid)
    sockets = []
    for index in range(args.count):
        sock = socket.create_connection(("127.0.0.1", args.port), timeout=60)
        if context:
            sock = context.wrap_socket(sock, server_hostname="localhost")
        sock.sendall(health_frame(1))
        read_frame(sock)
        sockets.append(sock)
    time.sleep(2)
    after = rss_kib(args.pid)
    start = time.monotonic()
    probe = sockets[len(sockets) // 2]
    probe.sendall(health_frame(2))
    read_frame(probe)
    print(json.dumps({"tls": bool(args.ca), "connections": args.count, "rss_before_kib": before,
                      "rss_after_kib": after, "kib_per_connection": round((after - before) / args.count, 2),
                      "probe_ms": round((time.monotonic() - start) * 1000, 2)}))
    for sock in sockets:
        sock.close()


if __name__ == "__main__":
    sys.exit(main())
