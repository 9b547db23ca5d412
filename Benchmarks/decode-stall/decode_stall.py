#!/usr/bin/env python3
"""Measures how long decode-heavy frames stall larder-server's event loop.

A probe connection sends health checks back to back (answered on the event
loop, so each round trip waits for whatever the loop is doing) while an
attacker connection sends 4 MiB frames built to be expensive to decode:

  mask      UpdateLocation with ~2 million empty update_mask paths
  unknown   ListLocations with ~2 million unknown fields
  metadata  an envelope with ~2 million empty metadata entries
  fields    an envelope of ~2 million repeated call_id fields

It prints one JSON line per kind: the probe's longest and 99th-percentile
round trip while the attack runs, next to the same figures without attack.

  decode_stall.py --port PORT [--frames 20] [--kinds mask,unknown,metadata,fields]

Start the server yourself (a release build), e.g.
  .build/release/larder-server --listen 127.0.0.1:7411 --db /tmp/stall.sqlite
Bounded: each kind sends --frames frames and stops after --seconds.
"""
import argparse
import json
import multiprocessing
import socket
import struct
import threading
import time

FRAME_LIMIT = 4 * 1024 * 1024
HEALTH = "/grpc.health.v1.Health/Check"
UPDATE_LOCATION = "/larder.v1.LocationService/UpdateLocation"
LIST_LOCATIONS = "/larder.v1.LocationService/ListLocations"


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def envelope(call_id, method, payload=b"", extra=b""):
    return varint(1 << 3) + varint(call_id) + field(2, method.encode()) + field(3, payload) + extra


def framed(body):
    return struct.pack(">I", len(body)) + body


def hostile_body(kind, call_id):
    room = FRAME_LIMIT - 200
    if kind == "mask":
        paths = b"\x0a\x00" * ((room - 16) // 2)
        return envelope(call_id, UPDATE_LOCATION, field(2, paths))
    if kind == "unknown":
        return envelope(call_id, LIST_LOCATIONS, b"\x78\x00" * (room // 2))  # field 15, varint 0
    if kind == "metadata":
        return envelope(call_id, LIST_LOCATIONS, extra=b"\x2a\x00" * (room // 2))  # empty map entries
    if kind == "fields":
        return envelope(call_id, LIST_LOCATIONS) + b"\x08\x01" * (room // 2)
    raise ValueError(kind)


def read_frame(sock):
    header = recv_exact(sock, 4)
    (length,) = struct.unpack(">I", header)
    return recv_exact(sock, length)


def recv_exact(sock, count):
    data = bytearray()
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("server closed the connection")
        data += chunk
    return bytes(data)


def probe(port, stop, results):
    """Runs in its own process (no GIL shared with the attacker); sends its samples back."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    samples = []
    call_id = 1
    while not stop.is_set():
        started = time.perf_counter()
        sock.sendall(framed(envelope(call_id, HEALTH)))
        read_frame(sock)
        samples.append(time.perf_counter() - started)
        call_id += 1
    sock.close()
    results.put(samples)


def attack(port, kind, frames, deadline, results):
    sock = socket.create_connection(("127.0.0.1", port))
    replies = [0]

    def reader():
        try:
            while replies[0] < frames:
                read_frame(sock)
                replies[0] += 1
        except (ConnectionError, OSError):
            pass

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    sent = 0
    frame_bytes = [framed(hostile_body(kind, n + 1)) for n in range(2)]
    try:
        while sent < frames and time.monotonic() < deadline:
            sock.sendall(frame_bytes[sent % 2])
            sent += 1
    except OSError:
        pass
    thread.join(timeout=max(0.0, deadline - time.monotonic()))
    results.update(sent=sent, replies=replies[0])
    sock.close()


def measure(port, kind, frames, seconds):
    stop, queue, results = multiprocessing.Event(), multiprocessing.Queue(), {}
    prober = multiprocessing.Process(target=probe, args=(port, stop, queue))
    prober.start()
    time.sleep(0.5)
    if kind != "none":
        attack(port, kind, frames, time.monotonic() + seconds, results)
    else:
        time.sleep(2.0)
    stop.set()
    samples = queue.get(timeout=60)
    prober.join()
    during = sorted(samples[20:]) or [0.0]  # the first calls warm the connection up
    return {
        "kind": kind,
        "frames_sent": results.get("sent", 0),
        "replies": results.get("replies", 0),
        "probe_calls": len(during),
        "probe_max_ms": round(during[-1] * 1000, 2),
        "probe_p99_ms": round(during[int(len(during) * 0.99) - 1 if len(during) > 1 else 0] * 1000, 2),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--kinds", default="mask,unknown,metadata,fields")
    args = parser.parse_args()
    for kind in ["none"] + args.kinds.split(","):
        print(json.dumps(measure(args.port, kind, args.frames, args.seconds)), flush=True)


if __name__ == "__main__":
    main()
