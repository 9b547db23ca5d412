/// The `larder bench --help` text.
enum BenchHelp {
    static let text = """
    usage: larder bench [--server HOST:PORT] [--workload ping|get|create|list|mix] [--mix get=80,create=15,list=5]
                        [--connections C] [--concurrency N] [--threads T]
                        [--duration 10s | --requests R] [--warmup 1s] [--rate R] [--time-limit D]
                        [--json] [--hist-out FILE] [--token TOKEN] [--server-pid PID]

    Load-tests a Larder server and reports throughput, latency percentiles and CPU use.
    Traffic goes only to --server. Before a get run it creates --seed-locations locations
    (default 1000), before a list run --seed-meals meal records (default 500), and says so on stderr.

    Workloads:
      ping     /grpc.health.v1.Health/Check (no database)
      get      GetLocation by a random id among the locations created first
      create   CreateMealRecord
      list     ListMealRecords, first page of 50
      mix      weighted mix of the above (--mix, default get=80,create=15,list=5)

    Options:
      --server HOST:PORT   server address (default 127.0.0.1:7411, or $LARDER_SERVER)
      --connections C      TCP connections (default min(concurrency, 4))
      --concurrency N      calls in flight in total, spread over the connections (default 64)
      --threads T          event-loop threads, each owning some connections (default 1)
      --duration D         measured time, e.g. 10s, 500ms, 2m (default 10s)
      --requests R         measure R calls instead of a duration (still capped by --time-limit)
      --warmup D           load before measuring (default 1s)
      --rate R             open loop: R calls/s on a constant schedule; latency counts from each call's
                           intended start (coordinated omission corrected, like wrk2); --concurrency caps
                           the calls in flight; the uncorrected latency is reported too
      --time-limit D       hard cap on warm-up + measurement (default warm-up + duration + 5s, or 60s with --requests)
      --json               print one JSON document instead of the text report
      --hist-out FILE      write the full percentile spectrum (HdrHistogram text format, values in ms)
      --token TOKEN        send "authorization: Bearer TOKEN" (default $LARDER_TOKEN)
      --server-pid PID     also report that process's CPU use (from /proc/PID/stat)
      --seed-locations N, --seed-meals N   data created before get and list runs

    The bench's own CPU per call (getrusage) is always reported: it should stay well below the server's.
    A progress line is drawn on stderr when stdout and stderr are both terminals.

    JSON keys (latencies in microseconds, CPU % of one core):
      workload, mix {name: weight}, server, connections, concurrency, threads, rate (null = closed loop),
      warmup_s, seconds (measurement window), seeded [text], calls, ok, errors, errors_by_code {CODE_NAME: n},
      first_error_messages {CODE_NAME: text}, lost_calls,
      by_workload {name: {calls, errors, latency_us}} (a mix only, else {}), connection_failures [text], calls_per_s,
      latency_us {count, min, mean, stddev, p50, p90, p99, p999, p9999, max},
      latency_uncorrected_us (same keys, or null without --rate), histogram [{from_us, to_us, count}],
      bench_cpu_us_per_call, bench_cpu_pct, server_cpu_pct (or null), server_cpu_us_per_call (or null)

    Exit status: 0 when the run made calls and none failed, 1 when some calls failed, 2 for usage errors,
    3 when the run could not start (connect, creating data).
    """
}
