#!/usr/bin/env python3
"""Checks and Markdown report for scripts/bench-grpc.sh.

    bench_grpc_report.py RESULTS.jsonl OUT.md

RESULTS holds one JSON line per run (grpc_load or h2load_run.py, plus "round"). Every run
is checked: no error status, the probe call's grpc-status 0 (h2load), and the servers'
own counters agree with h2load (between its "done" and "started" calls). The report goes
into OUT between <!-- grpc:begin --> and <!-- grpc:end --> (replaced, else appended);
with SMOKE set in the environment it is printed, not written. Exit 1 if a check failed.
The rest of the run's description comes from the environment (see bench-grpc.sh).
"""
import json
import os
import statistics
import sys

env = os.environ.get
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
out_path = sys.argv[2]


def check(r):
    """A list of problems with one run ([] = fine) and a short note of what was verified."""
    problems, note = [], []
    if r.get("errors"):
        problems.append(f"{r['errors']} errors {r.get('errors_by_code', '')}")
    if not r.get("requests"):
        problems.append("no calls completed")
    if r["driver"] == "h2load":
        if r.get("probe_grpc_status") != 0:
            problems.append(f"probe grpc-status {r.get('probe_grpc_status')}")
        else:
            note.append("probe 0")
        h2, sc = r.get("h2load", {}), r.get("server_count")
        lo, hi = h2.get("done", 0), h2.get("started", 0) + 1
        if sc:
            ok_count = sc.get("calls_status_0", sc.get("meal_rows_added", sc.get("OK")))
            others = {k: v for k, v in sc.items() if k not in ("calls_status_0", "meal_rows_added", "OK")}
            if others:
                problems.append(f"server counted non-OK codes {others}")
            if ok_count is None or not lo <= ok_count <= hi:
                problems.append(f"server counted {ok_count} OK, h2load done {lo} / started {hi - 1}")
            else:
                what = {"calls_status_0": "h2-echo's counter", "meal_rows_added": "rows added", "OK": "metrics' OK count"}
                note.append(f"{what[next(iter(sc))]} = h2load's calls")
        elif r["server"] == "reference":
            note.append("no server counter")
    else:
        note.append("status per call")
    return problems, ", ".join(note)


failures = []
for r in rows:
    problems, r["_checked"] = check(r)
    if problems:
        failures.append(f"round {r['round']} {r['driver']} -> {r['server']} {r['workload']} c={r['concurrency']}: "
                        + "; ".join(problems))


def groups():
    """(driver, workload, concurrency, server) -> runs, in first-seen order."""
    g = {}
    for r in rows:
        g.setdefault((r["driver"], r["workload"], r["concurrency"], r["server"]), []).append(r)
    return g


def med(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def rng(runs, key, fmt):
    vals = [r[key] for r in runs if r.get(key) is not None]
    if not vals:
        return "–"
    if len(vals) == 1:
        return fmt(vals[0])
    return f"{fmt(min(vals))}–{fmt(max(vals))}"


def f0(x):
    return "–" if x is None else f"{x:,.0f}"


def f1(x):
    return "–" if x is None else f"{x:,.1f}"


out = ["<!-- grpc:begin -->", "## gRPC over HTTP/2 drivers", ""]
out.append(f"Written by `scripts/bench-grpc.sh` on {env('STARTED')} ({env('ELAPSED')} s). Machine: {env('MACHINE')}. "
           f"Servers pinned to CPU {env('SERVER_CPU')}, load generators to CPU {env('CLIENT_CPU')} (`taskset`), loopback only; "
           f"{env('WARMUP')} s warm-up then {env('DURATION')} s measured per run, connections = min(in flight, {env('MAX_CONNS')}); "
           f"{env('ROUNDS')} rounds, the servers alternating within each (workload, in flight, driver) and the order flipped every round. "
           f"Load average before / after: {env('LOAD_BEFORE')} / {env('LOAD_AFTER')}. Cells give the median over the rounds "
           "and, for calls/s and server CPU per call, the range (min–max).")
out.append("")
if env("LARDER_NOTE"):
    out.append(f"**Larder:** {env('LARDER_NOTE')}.")
    out.append("")
out.append("*client µs/call* is the load generator's own CPU per call (getrusage for grpc-load and larder bench, /proc for h2load), "
           "*server µs/call* the server's from /proc/PID/stat, *others %* the most CPU every other process on the machine "
           "used during a run of that row (100 = one core: above ~10 the row measures the neighbours too). "
           "*replies checked*: grpc-load sees every call's status; h2load only HTTP 200, so each h2load run first makes one "
           "call with the same body through `nghttp -v` (grpc-status in the trailers, \"probe 0\"), and the servers' own "
           "counters are compared with h2load's calls (equal, give or take the calls in flight when h2load stopped) where a server has one (h2-echo's counter, rows the reference added for "
           "create, Larder's grpc_server_handled_total); the reference keeps no counter for get and list.")
out.append("")
g = groups()
titles = {"grpc-load": "grpc-load", "h2load": "h2load",
          "bench-grpc": "larder bench --protocol grpc (Larder's own HTTP/2 driver, nghttp2 client)",
          "lean": "larder bench over the lean protocol (same Larder server and port)"}
for driver in ("grpc-load", "h2load", "bench-grpc", "lean"):
    keys = [k for k in g if k[0] == driver]
    if not keys:
        continue
    out.append(f"### {titles[driver]}")
    out.append("")
    out.append("| workload | in flight | server | calls/s | p50 µs | p99 µs | server µs/call | server CPU % | client µs/call | client CPU % | others % | errors | replies checked |")
    out.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for k in keys:
        runs = g[k]
        errs = sum(r.get("errors", 0) for r in runs)
        measured = [r["others_cpu_pct"] for r in runs if r.get("others_cpu_pct") is not None]
        others = max(measured) if measured else None  # larder bench rows do not measure it
        notes = [f"{n} ({sum(r['_checked'] == n for r in runs)} of {len(runs)} runs)" for n in dict.fromkeys(r["_checked"] for r in runs)]
        out.append(f"| {k[1]} | {k[2]} | {k[3]} | {f0(med(runs, 'rps'))} ({rng(runs, 'rps', f0)}) | {f0(med(runs, 'p50_us'))} "
                   f"| {f0(med(runs, 'p99_us'))} | {f1(med(runs, 'server_cpu_us_per_call'))} ({rng(runs, 'server_cpu_us_per_call', f1)}) "
                   f"| {f0(med(runs, 'server_cpu_pct'))} | {f1(med(runs, 'client_cpu_us_per_call'))} | {f0(med(runs, 'client_cpu_pct'))} "
                   f"| {f0(others)} | {errs} | {'; '.join(notes)} |")
    out.append("")

# Larder against the reference, where both ran (issue 13 §6 targets).
pairs = []
for (driver, wl, c, server), runs in g.items():
    if server != "larder" or driver == "lean":
        continue
    for base in ("reference", "h2-echo"):
        if (driver, wl, c, base) in g:
            pairs.append((driver, wl, c, runs, g[(driver, wl, c, base)], base))
    if ("lean", wl, c, "larder") in g:
        pairs.append((driver, wl, c, runs, g[("lean", wl, c, "larder")], "Larder, lean"))
if pairs:
    out.append("### Larder / reference (get, list, create), Larder / h2-echo (ping), Larder HTTP/2 / Larder lean")
    out.append("")
    out.append("Targets (issue 13 §6), at 64 in flight: with grpc-load, server µs/call ≤ 0.5× the reference's for get and list, "
               "≤ 0.2× for create; with h2load, calls/s ≥ 2× for get and list with p99 ≤ 0.5×, ≥ 5× for create; "
               "ping ≥ 0.6× h2-echo's calls/s; Larder's server µs/call over HTTP/2 ≤ 1.5× over the lean protocol.")
    out.append("")
    out.append("| driver | workload | in flight | vs | calls/s × | p99 × | server µs/call × |")
    out.append("|---|---|---:|---|---:|---:|---:|")
    for driver, wl, c, lr, rr, base in pairs:
        def ratio(key):
            a, b = med(lr, key), med(rr, key)
            return "–" if not a or not b else f"{a / b:.2f}×"
        out.append(f"| {driver} | {wl} | {c} | {base} | {ratio('rps')} | {ratio('p99_us')} | {ratio('server_cpu_us_per_call')} |")
    out.append("")
# `larder bench --protocol grpc` against h2load on the same Larder server: the client-CPU target.
client_pairs = [(wl, c, g[("bench-grpc", wl, c, "larder")], g[("h2load", wl, c, "larder")])
                for (driver, wl, c, server) in g if driver == "bench-grpc" and ("h2load", wl, c, "larder") in g]
if client_pairs:
    out.append("### Client CPU per call: larder bench --protocol grpc / h2load, same Larder server")
    out.append("")
    out.append("Target (issue 13 §6): `larder bench --protocol grpc` costs no more client CPU per call than h2load "
               "(getrusage against h2load's /proc; the same server, calls in flight and connections, in the same run).")
    out.append("")
    out.append("| workload | in flight | larder bench µs/call | h2load µs/call | × |")
    out.append("|---|---:|---:|---:|---:|")
    for wl, c, mine, theirs in client_pairs:
        a_, b_ = med(mine, "client_cpu_us_per_call"), med(theirs, "client_cpu_us_per_call")
        out.append(f"| {wl} | {c} | {f1(a_)} | {f1(b_)} | {'–' if not a_ or not b_ else f'{a_ / b_:.2f}×'} |")
    out.append("")
# Each driver's own CPU per call, by server, workload and calls in flight.
concs = sorted({r["concurrency"] for r in rows})
out.append("### Client CPU per call of each driver (µs, median over the rounds)")
out.append("")
out.append("| driver | server | workload | " + " | ".join(f"{c} in flight" for c in concs) + " |")
out.append("|---|---|---|" + "---:|" * len(concs))
for driver, server, wl in dict.fromkeys((k[0], k[3], k[1]) for k in g):
    cells = [f1(med(g[(driver, wl, c, server)], "client_cpu_us_per_call")) if (driver, wl, c, server) in g else "–" for c in concs]
    out.append(f"| {driver} | {server} | {wl} | " + " | ".join(cells) + " |")
out.append("")
out.append("Commands (one run of each driver, as the script ran them; taskset pins, PIDs and ports vary):")
out.append("")
out.append("```")
out.append(env("COMMAND_LINE") or "scripts/bench-grpc.sh")
for driver in ("grpc-load", "h2load"):
    ex = next((r for r in rows if r["driver"] == driver and r["concurrency"] == max(concs)), None)
    if ex is None:
        continue
    if driver == "grpc-load":
        out.append(f"taskset -c {env('CLIENT_CPU')} grpc_load --target {ex['target']} --workload {ex['workload']} --conns {ex['conns']} "
                   f"--concurrency {ex['concurrency']} --warmup {env('WARMUP')} --duration {env('DURATION')} --server-pid PID --label {ex['server']}")
    else:
        out.append(f"taskset -c {env('CLIENT_CPU')} Benchmarks/h2load/h2load_run.py ... --concurrency {ex['concurrency']} --conns {ex['conns']}  # runs:")
        out.append(ex.get("command", ""))
out.append("```")
out.append("")
if failures:
    out.append("**Runs that failed a check:**")
    out.append("")
    out.extend(f"- {f}" for f in failures)
    out.append("")
out.append("Raw JSON lines: `BENCHMARKS-grpc.jsonl`.")
out.append("<!-- grpc:end -->")
text = "\n".join(out) + "\n"

if env("SMOKE"):
    print(text)
else:
    old = open(out_path).read() if os.path.exists(out_path) else ""
    begin, end = "<!-- grpc:begin -->", "<!-- grpc:end -->"
    if begin in old and end in old:
        new = old[:old.index(begin)] + text.rstrip("\n") + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    open(out_path, "w").write(new)
for f in failures:
    print(f"bench_grpc_report: check failed: {f}", file=sys.stderr)
sys.exit(1 if failures else 0)
