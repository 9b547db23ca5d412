#!/usr/bin/env python3
"""One h2load run against a gRPC-over-HTTP/2 server, reported as one JSON line.

h2load (Debian nghttp2-client) is a cheap HTTP/2 driver: it sends one pre-encoded body
(a gRPC length-prefixed message, written by `grpc_load --write-bodies`) on every stream
with the gRPC request headers, keeping --conns connections x (--concurrency / --conns)
streams in flight (closed loop). It sees only HTTP statuses, not grpc-status, so this
wrapper checks the replies in other ways and reports what it could check:

  - before the run, one call with the same body through `nghttp -v`, whose trailers
    carry grpc-status (probe_grpc_status);
  - --echo-log LOG: h2_echo's own counter (SIGUSR1 -> "event=stats calls=N"), every
    reply of which is grpc-status 0;
  - --sqlite-db DB: for create, rows added to meal_records (the reference server keeps
    no status counters; a created row is a call that succeeded);
  - --metrics URL: Larder's Prometheus grpc_server_handled_total by grpc_code for the
    method (issue 13: on the same server once it speaks HTTP/2).

Latency percentiles are exact, from h2load's --log-file (one line per request of the
measured phase: start time, HTTP status, microseconds to the end of the response).
CPU: the server's from /proc/PID/stat (--server-pid), h2load's own from /proc/PID/stat,
and every other process's (a shared machine's noise), each over the measured window.
Warm-up is a separate h2load run (-D WARMUP) so the counters see the measured run only.
The runs are bounded: h2load gets -D and is killed 30 s after its duration.

Run it pinned (taskset -c 1 ...): h2load inherits the affinity.
"""
import argparse
import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """utime+stime of pid in seconds, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def all_cpu(skip):
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in skip:
            v = proc_cpu(int(name))
            if v is not None:
                out[int(name)] = v
    return out


def machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / TICK


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def percentile(sorted_us, q):
    if not sorted_us:
        return 0.0
    rank = max(1, min(len(sorted_us), -(-int(q * 1000 * len(sorted_us)) // 1000)))
    return float(sorted_us[rank - 1])


def probe(args, headers):
    """grpc-status from the trailers of one call with the same body, or None."""
    cmd = ["nghttp", "-v", "-d", args.body, *sum((["-H", h] for h in headers), []), args.url]
    try:
        out = subprocess.run(cmd, capture_output=True, timeout=10).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.findall(r"recv \(stream_id=\d+\) grpc-status: (\d+)", out)
    return int(m[-1]) if m else None


def echo_calls(args):
    os.kill(args.server_pid, signal.SIGUSR1)
    for _ in range(50):
        time.sleep(0.05)
        with open(args.echo_log) as f:
            m = re.findall(r"event=stats calls=(\d+)", f.read())
        if m and len(m) > echo_calls.seen:
            echo_calls.seen = len(m)
            return int(m[-1])
    return None


echo_calls.seen = 0


def meal_rows(args):
    try:
        with sqlite3.connect(f"file:{args.sqlite_db}?mode=ro", uri=True, timeout=10) as db:
            return db.execute("SELECT count(*) FROM meal_records").fetchone()[0]
    except sqlite3.Error:
        return None


def handled_by_code(args):
    """grpc_code -> count of grpc_server_handled_total for the method, from Larder's metrics."""
    service, method = args.path.strip("/").split("/", 1)
    try:
        text = urllib.request.urlopen(args.metrics, timeout=5).read().decode()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        if (line.startswith("grpc_server_handled_total{") and f'grpc_method="{method}"' in line
                and f'grpc_service="{service}"' in line):
            code = re.search(r'grpc_code="(\w+)"', line)
            if code:
                out[code.group(1)] = out.get(code.group(1), 0) + float(line.rsplit(" ", 1)[1])
    return out


def server_count(args):
    if args.echo_log and args.server_pid:
        return echo_calls(args)
    if args.sqlite_db:
        return meal_rows(args)
    if args.metrics:
        return handled_by_code(args)
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", required=True, help="HOST:PORT")
    p.add_argument("--path", required=True, help="gRPC method path, e.g. /larder.v1.LocationService/GetLocation")
    p.add_argument("--body", required=True, help="file with the framed request (grpc_load --write-bodies)")
    p.add_argument("--workload", default="", help="name for the report")
    p.add_argument("--label", default="", help="server name for the report")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--conns", type=int, default=1)
    p.add_argument("--warmup", type=float, default=1)
    p.add_argument("--duration", type=float, default=5)
    p.add_argument("--server-pid", type=int, default=0)
    p.add_argument("--echo-log")
    p.add_argument("--sqlite-db")
    p.add_argument("--metrics")
    p.add_argument("--h2load", default="h2load")
    args = p.parse_args()
    if not (1 <= args.duration <= 600 and 0 <= args.warmup <= 60):
        p.error("--duration must be 1-600 s and --warmup 0-60 s")
    conns = max(1, min(args.conns, args.concurrency))
    streams = max(1, args.concurrency // conns)
    args.url = f"http://{args.target}{args.path}"
    headers = ["content-type: application/grpc", "te: trailers"]

    probe_status = probe(args, headers)
    base = [args.h2load, "-c", str(conns), "-m", str(streams), "-t", "1", "-d", args.body,
            *sum((["-H", h] for h in headers), [])]
    # Warm-up as a run of its own, so that the server's counters taken around the measured
    # run count the measured run's calls only (h2load's --warm-up-time calls are not in its
    # summary).
    if args.warmup >= 1:
        subprocess.run([*base, "-D", str(int(round(args.warmup))), args.url], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=args.warmup + 30)
    count0 = server_count(args)

    log = tempfile.NamedTemporaryFile(prefix="h2load-", suffix=".log", delete=False)
    log.close()
    h2 = subprocess.Popen([*base, "-D", str(int(round(args.duration))), "--log-file", log.name, args.url],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    skip = {os.getpid(), h2.pid, args.server_pid}
    load_before = loadavg()
    time.sleep(0.05)  # connecting takes well under 50 ms on loopback
    t0 = time.monotonic()
    c0, s0, m0, o0 = proc_cpu(h2.pid), proc_cpu(args.server_pid) if args.server_pid else None, machine_busy(), all_cpu(skip)
    time.sleep(max(0.0, int(round(args.duration)) - 0.1))
    t1 = time.monotonic()
    c1, s1, m1, o1 = proc_cpu(h2.pid), proc_cpu(args.server_pid) if args.server_pid else None, machine_busy(), all_cpu(skip)
    try:
        out, _ = h2.communicate(timeout=args.duration + 30)
    except subprocess.TimeoutExpired:
        h2.kill()
        out, _ = h2.communicate()
    out = out.decode("utf-8", "replace")
    window = t1 - t0

    count1 = server_count(args)

    lat, non200 = [], 0
    with open(log.name) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3:
                if parts[1] != "200":
                    non200 += 1
                lat.append(int(parts[2]))
    os.unlink(log.name)
    lat.sort()
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", out)
    h2stats = dict(zip(["total", "started", "done", "succeeded", "failed", "errored", "timeout"], map(int, m.groups()))) if m else {}
    seconds = float(int(round(args.duration)))
    calls = len(lat)

    def pct(a, b):
        return None if a is None or b is None else round(100 * (b - a) / window, 1)

    def per_call(a, b):
        return None if a is None or b is None or not calls else round((b - a) * 1e6 / (calls * window / seconds), 2)

    others = sum(max(0.0, v - o0.get(pid, 0.0)) for pid, v in o1.items())
    result = {
        "driver": "h2load", "server": args.label, "target": args.target, "workload": args.workload,
        "conns": conns, "concurrency": conns * streams, "requests": calls, "errors": non200 + h2stats.get("failed", 0) + h2stats.get("errored", 0),
        "h2load": h2stats, "seconds": seconds, "rps": round(calls / seconds, 1),
        "p50_us": percentile(lat, 0.5), "p90_us": percentile(lat, 0.9), "p99_us": percentile(lat, 0.99),
        "p999_us": percentile(lat, 0.999), "max_us": float(lat[-1]) if lat else 0.0,
        "mean_us": round(sum(lat) / calls, 1) if calls else 0.0,
        "client_cpu_pct": pct(c0, c1), "client_cpu_us_per_call": per_call(c0, c1),
        "server_cpu_pct": pct(s0, s1), "server_cpu_us_per_call": per_call(s0, s1),
        "others_cpu_pct": round(100 * others / window, 1), "host_busy_pct": round(100 * (m1 - m0) / window, 1),
        "loadavg": load_before, "probe_grpc_status": probe_status,
        "command": shlex.join([*base, "-D", str(int(round(args.duration))), "--log-file", "LOG", args.url]),
    }
    # What the server counted during the measured run: equal to h2load's "done", give or
    # take the calls in flight when h2load stopped (at most --concurrency).
    if args.echo_log and count0 is not None and count1 is not None:
        result["server_count"] = {"calls_status_0": count1 - count0}
    elif args.sqlite_db and count0 is not None and count1 is not None:
        result["server_count"] = {"meal_rows_added": count1 - count0}
    elif args.metrics and count0 is not None and count1 is not None:
        result["server_count"] = {code: int(count1.get(code, 0) - count0.get(code, 0)) for code in count1
                                  if count1.get(code, 0) != count0.get(code, 0)}
    if not m:
        print(f"h2load_run: h2load gave no summary:\n{out}", file=sys.stderr)
    print(json.dumps(result), flush=True)
    return 0 if calls and m else 2


if __name__ == "__main__":
    sys.exit(main())
