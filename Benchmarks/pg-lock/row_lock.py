"""Writes while another PostgreSQL session keeps one row locked: how many of them commit.

    LARDER_PG_URL=postgres://larder@127.0.0.1:55432/postgres \
      .venv/bin/python Benchmarks/pg-lock/row_lock.py LARDER_SERVER_BIN... > results.jsonl

For each larder-server binary, on a fresh database of that cluster: a meal record is made,
another session locks its row (SELECT ... FOR UPDATE) for HOLD seconds (default 10), and
meanwhile one client updates that record in a loop (no deadline) while 4 others create meal
records in a loop (5 s deadline each). One JSON line per binary: creates committed during the
lock and their latency (max, p50), and what the update calls got. Bounded: HOLD + 15 s per binary.
"""
import json, os, re, statistics, subprocess, sys, threading, time, uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../clients/python/src"))
from larder_client import LarderClient, LarderError  # noqa: E402
from larder_client.messages import MEAL_CATEGORY_LUNCH  # noqa: E402

HOLD = float(os.environ.get("HOLD", "10"))
ADMIN = os.environ["LARDER_PG_URL"]


def psql(url, sql, wait=True):
    cmd = ["psql", url, "-v", "ON_ERROR_STOP=1", "-Atc", sql]
    return subprocess.run(cmd, check=True, capture_output=True) if wait else subprocess.Popen(cmd, stdout=subprocess.DEVNULL)


def start(binary, url):
    proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--db", url, "--no-seed", "--durability", "normal"],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    for line in proc.stderr:
        match = re.search(r"event=listening address=127\.0\.0\.1:(\d+)", line)
        if match:
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, int(match.group(1))
        if time.time() > deadline:
            break
    proc.kill()
    raise SystemExit(f"{binary} did not start")


def run(binary):
    name = "rowlock_" + uuid.uuid4().hex[:8]
    psql(ADMIN, f"CREATE DATABASE {name}")
    url = ADMIN.rsplit("/", 1)[0] + "/" + name
    proc, port = start(binary, url)
    try:
        client = LarderClient(f"127.0.0.1:{port}", timeout=10)
        target = client.create_meal_record(meal_record={"name": "target", "calories": 1, "category": MEAL_CATEGORY_LUNCH})
        lock = psql(url, f"BEGIN; SELECT id FROM meal_records WHERE id = '{target.id}' FOR UPDATE; "
                         f"SELECT pg_sleep({HOLD}); COMMIT;", wait=False)
        time.sleep(0.5)
        stop = threading.Event()
        creates, updates = [], []

        def updater():
            c = LarderClient(f"127.0.0.1:{port}", timeout=None)
            while not stop.is_set():
                t = time.time()
                try:
                    c.update_meal_record(meal_record={"id": target.id, "calories": 2}, update_mask={"paths": ["calories"]})
                    updates.append(("OK", time.time() - t))
                except LarderError as e:
                    updates.append((e.code.name, time.time() - t))

        def creator(i):
            c = LarderClient(f"127.0.0.1:{port}", timeout=5)
            while not stop.is_set():
                t = time.time()
                try:
                    c.create_meal_record(meal_record={"name": f"c{i}", "calories": 1, "category": MEAL_CATEGORY_LUNCH})
                    creates.append(("OK", time.time() - t))
                except LarderError as e:
                    creates.append((e.code.name, time.time() - t))

        threads = [threading.Thread(target=updater)] + [threading.Thread(target=creator, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        time.sleep(HOLD - 1)
        stop.set()
        for t in threads:
            t.join(timeout=HOLD + 15)
        lock.wait(timeout=HOLD + 15)
        ok = [d for s, d in creates if s == "OK"]
        return {"bin": binary, "hold_s": HOLD, "creates_ok": len(ok),
                "creates_failed": len(creates) - len(ok),
                "create_p50_ms": round(statistics.median(ok) * 1000, 1) if ok else None,
                "create_max_ms": round(max(ok) * 1000, 1) if ok else None,
                "updates": [(s, round(d, 2)) for s, d in updates[:6]]}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        psql(ADMIN, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


for binary in sys.argv[1:]:
    print(json.dumps(run(binary)), flush=True)
