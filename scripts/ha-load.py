#!/usr/bin/env python3
"""Write and read load for scripts/ha-failover.sh, and its verdict.

    ha-load.py run --server HOST:PORT --out DIR --stop-file FILE --max-seconds N
        Creates meal records with client-chosen ids (writer threads) and reads
        back acknowledged ones (reader threads) until FILE exists (or N s).
        Writes DIR/acked.txt (every id answered OK), DIR/unknown.txt (ids whose
        outcome the server said is unknown), DIR/timeline.json.
    ha-load.py report --out DIR --events FILE --member-ports P1,P2,P3
        Compares the acknowledged ids with the primary's rows, the members with
        each other, and prints per-event numbers; the last line is
        rounds=N acknowledged=N lost=N max_unavailable_s=X. Exit 1 when a write was lost.

Uses clients/python (larder_client) from the repository's venv.
"""
import argparse
import collections
import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid

from larder_client import LarderClient, LarderError, StatusCode


def run(args):
    stop = threading.Event()
    lock = threading.Lock()
    acked, unknown = [], []
    # (completion time, kind, status name) of every call.
    timeline = []

    def record(kind, code):
        with lock:
            timeline.append((time.time(), kind, code))

    def client():
        return LarderClient(args.server, timeout=args.timeout)

    def worker(kind):
        conn = None
        while not stop.is_set():
            if conn is None:
                try:
                    conn = client()
                except (LarderError, OSError):
                    record(kind, "UNAVAILABLE")
                    time.sleep(0.05)
                    continue
            try:
                if kind == "write":
                    record_id = str(uuid.uuid4())
                    conn.create_meal_record(meal_record={
                        "id": record_id, "name": "failover", "calories": 100, "category": 1,
                        "eaten_at": {"seconds": int(time.time())}})
                    with lock:
                        acked.append((record_id, time.time()))
                else:
                    with lock:
                        record_id = random.choice(acked[-1000:])[0] if acked else None
                    if record_id is None:
                        time.sleep(0.01)
                        continue
                    found = conn.get_meal_record(id=record_id)
                    if found.id != record_id:
                        record(kind, "WRONG_ROW")
                        continue
                record(kind, "OK")
            except LarderError as error:
                code = error.code.name if isinstance(error.code, StatusCode) else str(error.code)
                if kind == "write" and error.code == StatusCode.UNKNOWN:
                    with lock:
                        unknown.append(record_id)
                record(kind, code)
                if error.code in (StatusCode.UNAVAILABLE, StatusCode.DEADLINE_EXCEEDED):
                    try:
                        conn.close()
                    except Exception:
                        pass
                    conn = None
                    time.sleep(0.02)
            except OSError:
                record(kind, "UNAVAILABLE")
                conn = None
                time.sleep(0.02)

    threads = [threading.Thread(target=worker, args=("write",), daemon=True) for _ in range(args.writers)]
    threads += [threading.Thread(target=worker, args=("read",), daemon=True) for _ in range(args.readers)]
    for thread in threads:
        thread.start()
    deadline = time.time() + args.max_seconds
    while time.time() < deadline and not os.path.exists(args.stop_file):
        time.sleep(0.2)
        with lock:
            ok = sum(1 for t, k, c in timeline[-5000:] if k == "write" and c == "OK" and t > time.time() - 1)
        with open(os.path.join(args.out, "rate.txt.tmp"), "w") as f:
            f.write(f"{ok}\n")
        os.replace(os.path.join(args.out, "rate.txt.tmp"), os.path.join(args.out, "rate.txt"))
    stop.set()
    for thread in threads:
        thread.join(timeout=args.timeout + 5)
    with lock:
        with open(os.path.join(args.out, "acked.txt"), "w") as f:
            f.writelines(f"{i} {t:.3f}\n" for i, t in acked)
        with open(os.path.join(args.out, "unknown.txt"), "w") as f:
            f.writelines(i + "\n" for i in unknown)
        with open(os.path.join(args.out, "timeline.json"), "w") as f:
            json.dump(timeline, f)
    print(f"ha-load: {len(acked)} writes acknowledged, {len(unknown)} unknown", file=sys.stderr)


def psql(port, sql):
    out = subprocess.run(["psql", "-X", "-A", "-t", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                          "-d", "postgres", "-c", sql], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"psql on port {port}: {out.stderr.strip()}")
    return out.stdout.strip()


def report(args):
    acked_at = dict(line.split() for line in open(os.path.join(args.out, "acked.txt")))
    acked = set(acked_at)
    unknown = set(open(os.path.join(args.out, "unknown.txt")).read().split())
    timeline = sorted(json.load(open(os.path.join(args.out, "timeline.json"))))
    events = []
    for line in open(args.events):
        stamp, name = line.split(maxsplit=1)
        events.append((float(stamp), name.strip()))

    primary = None
    for _ in range(60):
        for port in args.member_ports.split(","):
            try:
                if psql(port, "SELECT pg_is_in_recovery()") == "f":
                    primary = port
                    break
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        if primary:
            break
        time.sleep(1)
    if primary is None:
        print("no primary within 60 s: cannot verify")
        return 1
    present = set(psql(primary, "SELECT id FROM meal_records").split())
    lost = acked - present
    if lost:
        with open(os.path.join(args.out, "lost.txt"), "w") as f:
            f.writelines(f"{i} {acked_at[i]}\n" for i in sorted(lost, key=lambda i: float(acked_at[i])))
    applied_unknown = len(unknown & present)

    # Every member holds the same rows once the replicas caught up with the primary.
    digest_sql = "SELECT count(*) || ' ' || md5(coalesce(string_agg(id, ',' ORDER BY id), '')) FROM meal_records"
    digests = {}
    for _ in range(60):
        digests = {}
        for port in args.member_ports.split(","):
            try:
                digests[port] = psql(port, digest_sql)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                digests[port] = f"unreachable ({error})"
        if len(set(digests.values())) == 1:
            break
        time.sleep(1)
    consistent = len(set(digests.values())) == 1

    writes = [(t, c) for t, k, c in timeline if k == "write"]
    ok_times = [t for t, c in writes if c == "OK"]
    rounds = 0
    max_gap = 0.0
    print(f"{'event':<28} lost/stale reads {'no-write s':>10} {'back to rate s':>14}  failed calls by status")
    for index, (start, name) in enumerate(events):
        end = events[index + 1][0] if index + 1 < len(events) else (timeline[-1][0] if timeline else start)
        before = [t for t in ok_times if start - 5 <= t < start]
        rate = len(before) / 5.0
        # The longest stretch without an acknowledged write, from the event on.
        window = [start] + [t for t in ok_times if start <= t <= end] + [end]
        gap = max((b - a) for a, b in zip(window, window[1:])) if len(window) > 1 else 0.0
        # Back to rate: the first second-long window after the event with at least half the earlier rate.
        back = None
        t = start
        while t < end and rate > 0:
            if sum(1 for x in ok_times if t <= x < t + 1) >= rate / 2:
                back = t - start
                break
            t += 0.25
        failed = collections.Counter(c for tt, k, c in timeline if c != "OK" and start <= tt <= start + (back or (end - start)) + 1)
        if name.startswith("kill9-primary") or name.startswith("sigstop-primary"):
            rounds += 1
        max_gap = max(max_gap, gap)
        lost_here = sum(1 for i in lost if start <= float(acked_at[i]) < end)
        stale_here = sum(1 for tt, k, c in timeline if k == "read" and c == "NOT_FOUND" and start <= tt < end)
        print(f"{name:<28} lost={lost_here} stale={stale_here} {gap:>10.1f} "
              f"{('%.1f' % back) if back is not None else 'never':>14}  "
              f"{dict(failed) or '-'} (rate before {rate:.0f} writes/s)")
    statuses = collections.Counter(c for _, k, c in timeline if c != "OK")
    reads_ok = sum(1 for _, k, c in timeline if k == "read" and c == "OK")
    print(f"writes acknowledged: {len(acked)}, present on the primary: {len(acked) - len(lost)}, "
          f"lost: {len(lost)}; outcome UNKNOWN: {len(unknown)} (of them applied: {applied_unknown})")
    print(f"reads OK: {reads_ok}; acknowledged ids a read did not find (stale reads): {statuses.get('NOT_FOUND', 0)}; "
          f"failed calls by status over the run: {dict(statuses)}")
    print(f"members consistent: {consistent} {digests}")
    print(f"rounds={rounds} acknowledged={len(acked)} lost={len(lost)} max_unavailable_s={max_gap:.1f}")
    return 0 if not lost and consistent and "WRONG_ROW" not in statuses else 1


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--server", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--stop-file", required=True)
    r.add_argument("--max-seconds", type=float, default=300)
    r.add_argument("--writers", type=int, default=8)
    r.add_argument("--readers", type=int, default=2)
    r.add_argument("--timeout", type=float, default=2.0)
    p = sub.add_parser("report")
    p.add_argument("--out", required=True)
    p.add_argument("--events", required=True)
    p.add_argument("--member-ports", required=True)
    args = parser.parse_args()
    if args.command == "run":
        run(args)
        return 0
    return report(args)


if __name__ == "__main__":
    sys.exit(main())
