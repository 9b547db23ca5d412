#!/usr/bin/env python3
"""One `larder bench --json` result as a row of scripts/bench-grpc.sh's results.

    lean_row.py BENCH_JSON TARGET [DRIVER]

Prints the JSON line grpc_load prints, with the keys bench_grpc_report.py reads. DRIVER is
"lean" (default: Larder's own protocol, on the same server and port as its gRPC-over-HTTP/2
rows) or "bench-grpc" (`larder bench --protocol grpc`).
"""
import json
import sys

b = json.loads(sys.argv[1])
lat = b.get("latency_us") or {}
calls = b.get("calls") or 0
row = {
    "driver": sys.argv[3] if len(sys.argv) > 3 else "lean", "server": "larder", "target": sys.argv[2], "workload": b.get("workload"),
    "conns": b.get("connections"), "concurrency": b.get("concurrency"), "requests": calls,
    "errors": (b.get("errors") or 0) + (b.get("lost_calls") or 0), "errors_by_code": b.get("errors_by_code") or {},
    "seconds": b.get("seconds"), "rps": b.get("calls_per_s"),
    "p50_us": lat.get("p50"), "p90_us": lat.get("p90"), "p99_us": lat.get("p99"), "p999_us": lat.get("p999"),
    "max_us": lat.get("max"), "mean_us": lat.get("mean"),
    "client_cpu_pct": b.get("bench_cpu_pct"), "client_cpu_us_per_call": b.get("bench_cpu_us_per_call"),
    "server_cpu_pct": b.get("server_cpu_pct"), "server_cpu_us_per_call": b.get("server_cpu_us_per_call"),
    "others_cpu_pct": None,
    "loadavg": " ".join(open("/proc/loadavg").read().split()[:3]),
}
print(json.dumps(row))
