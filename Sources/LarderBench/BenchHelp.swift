/// The `larder bench --help` text.
enum BenchHelp {
    static let text = """
    usage: larder bench [--server HOST:PORT] [--protocol lean|grpc] [--workload ping|get|create|list|mix]
                        [--mix get=80,create=15,list=5]
                        [--call METHOD [-d JSON|@FILE]] [-m METADATA]...
                        [--connections C] [--concurrency N] [--threads T]
                        [--duration 10s | --requests R] [--warmup 1s] [--time-limit D] [--connect-timeout D]
                        [--rate R | --load-schedule step|line --load-start R --load-step R
                                    [--load-step-duration 1s] [--load-end R]]
                        [--format text|json|csv|html] [-o FILE] [--json] [--hist-out FILE]
                        [--keep-data] [--token TOKEN | --token-file PATH] [--server-pid PID]
                        [--tls [--ca FILE] [--server-name NAME] [--insecure-skip-verify] [--cert FILE --key FILE]]
           larder bench [--server HOST:PORT] --clean-up PREFIX

    Load-tests a Larder server and reports throughput, latency percentiles and CPU use.
    Traffic goes only to --server.

    Data: everything the bench creates is named under a prefix of its own, larder-bench-XXXXXX
    (locations larder-bench-XXXXXX-N, meal records larder-bench-XXXXXX-porridge, ...), and is deleted
    after the run, also after Ctrl-C; the report says what was deleted. Before a get run it creates
    --seed-locations locations (default 1000), before a list run --seed-meals meal records (default 500);
    a create run's meals are deleted by the ids its calls returned (by name only when a reply was lost).
    --keep-data keeps all of it; the report then names
    the prefix. The first Ctrl-C or SIGTERM stops the load and still deletes; a second one quits at once and prints
    what was left. --clean-up PREFIX deletes every location and meal record whose name starts with PREFIX
    (which must start with larder-bench-; larder-bench- alone removes what any run left); it runs no load and takes
    only --server, --token, --token-file, --metadata, --connect-timeout and the TLS flags. Creating and deleting are not
    bounded by --time-limit: each gives up when the server sends nothing for 30 s, and after 120 s (creating) or
    600 s (deleting) in all. With --call, only what is
    named under {{.Prefix}} is deleted (and counted); anything else a call creates stays, unreported.

    Workloads:
      ping     /grpc.health.v1.Health/Check (no database)
      get      GetLocation by a random id among the locations created first
      create   CreateMealRecord
      list     ListMealRecords, first page of 50
      mix      weighted mix of the above (--mix, default get=80,create=15,list=5)
      --call   any method (like ghz): --call /larder.v1.LocationService/ListLocations
               (also larder.v1.LocationService/ListLocations or larder.v1.LocationService.ListLocations)

    Request template (-d/--data, proto3 JSON; @FILE reads a file), placeholders replaced as text per call:
      {{.RequestNumber}}     the call's number, from 0 (warm-up included)
      {{.Prefix}}            this run's data prefix: name what you create with it and it is deleted afterwards
      {{.UUID}}              a random UUID v4
      {{.Timestamp}}         now, RFC 3339 UTC
      {{randomString N}}     N random lowercase letters and digits (1-1000)
      {{randomInt MIN MAX}}  a random integer from MIN to MAX
      {{randomLocationID}}   the id of one of --seed-locations locations created before the run
      {{randomMealID}}       the id of one of --seed-meals meal records created before the run
      e.g. larder bench --call /larder.v1.LocationService/CreateLocation \\
             -d '{"location": {"name": "{{.Prefix}}-{{.RequestNumber}}", "colorHex": "#00AA00"}}'
           larder bench --call /larder.v1.LocationService/GetLocation -d '{"id": "{{randomLocationID}}"}'
      The random values come from a generator seeded per run. Metadata is not templated.

    Options:
      --server HOST:PORT   server address (default 127.0.0.1:7411, or $LARDER_SERVER)
      --protocol P         lean (default): Larder's own framing; grpc: standard gRPC over HTTP/2 (cleartext h2c, or
                           h2 by ALPN with --tls; nghttp2), one stream per call, --concurrency spread over the connections as streams, the
                           same pre-encoded requests; errors are counted by grpc-status (a non-200 HTTP status or a
                           reset stream maps to a gRPC code as stock clients do). Both reach the same port. The data
                           a run creates first, and the clean-up after, always use the lean protocol
      --connections C      TCP connections (default min(concurrency, 4); at most --concurrency, as each carries
                           at least one call: more are cut to it, and the report's connections says so)
      --concurrency N      calls in flight in total, spread over the connections (default 64)
      --threads T          event-loop threads, each owning some connections (default 1; at most --connections)
      --duration D         measured time, e.g. 10s, 500ms, 2m (default 10s; with a ramp that has --load-end:
                           the time to reach it plus one step). Calls still in flight at its end are waited for
                           (until --time-limit: 5s more by default) and their latencies measured; any still
                           unanswered then stop the run short (exit 1)
      --requests R         after the warm-up, send R calls and measure them instead of a duration (calls the
                           warm-up left in flight may complete in place of the last ones; none is sent past R). A
                           --time-limit that comes first ends the run, reported as stopped_by (exit 1)
      --warmup D           load before measuring (default 1s)
      --rate R             open loop: R calls/s on a constant schedule (--load-schedule const); latency counts from
                           each call's intended start (coordinated omission corrected, like wrk2); --concurrency caps
                           the calls in flight; the uncorrected latency is reported too
      --load-schedule step|line   open loop with a changing rate, as ghz: step starts at --load-start calls/s and
                           adds --load-step every --load-step-duration (default 1s); line adds --load-step calls/s
                           every second; both stop at --load-end when given (a negative step ramps down to it).
                           The warm-up runs at the start rate; the ramp starts with the measured window. The
                           report has one row per step (a line ramp: per --load-step-duration window)
      --time-limit D       hard cap on warm-up + measurement (default warm-up + duration + 5s, or 60s with --requests;
                           with --duration, more than warm-up + duration). Every duration flag takes at most 24h
      --connect-timeout D  how long opening each connection (and its TLS handshake) may take (default 10s, or
                           $LARDER_TIMEOUT; 'larder --timeout D bench' sets it too). Calls have no deadline: a slow
                           one counts in the latency, and --time-limit ends the run
      -m, --metadata M     call metadata, repeatable: 'key: value', key=value or a JSON object '{"key": "value"}'
      --format F           text (default), json, csv or html; --json is --format json
      -o, --output FILE    write the report to FILE instead of stdout
      --hist-out FILE      write the full percentile spectrum (HdrHistogram text format, values in ms)
      --keep-data          keep what the run created (see Data)
      --token TOKEN        send "authorization: Bearer TOKEN" (default $LARDER_TOKEN)
      --token-file PATH    read the token from PATH, a file of one line (env LARDER_TOKEN_FILE)
      --tls                every connection (load, data, clean-up) does its own TLS handshake, verified against the
                           system trust store or --ca, offering ALPN larder (lean) or h2 (grpc). Each load connection
                           waits up to 200ms for the server's session ticket (TLS 1.3 sends it after the handshake) and
                           the next one offers it, so the handshakes after the first resume; the report's tls line
                           says how many did (env LARDER_TLS=1)
      --ca FILE            with --tls: trust the CA certificates in FILE (PEM) instead of the system's (env LARDER_CA)
      --server-name NAME   with --tls: the name the server's certificate must match, and SNI (default: the --server
                           host; env LARDER_SERVER_NAME)
      --insecure-skip-verify   with --tls: accept any server certificate (a warning on stderr; env
                           LARDER_INSECURE_SKIP_VERIFY=1)
      --cert FILE, --key FILE  with --tls: present this client certificate and key (PEM), for a server started with
                           --tls-client-ca (env LARDER_CERT, LARDER_KEY)
      --server-pid PID     also report that process's CPU use (from /proc/PID/stat)
      --seed-locations N, --seed-meals N   data created before get and list runs (and for the random ids above)

    The bench's own CPU per call (getrusage) is always reported: it should stay well below the server's.
    A progress line is drawn on stderr when stdout and stderr are both terminals.

    HTML (--format html): one self-contained page, no external files: summary, latency histogram, latency over time
    (p50, p99, max) and throughput over time (with the target rate of an open loop) as inline SVG, the steps, and the
    text report. CSV (--format csv): one table, columns
      section,name,start_s,seconds,target_rate,calls,errors,calls_per_s,p50_us,p90_us,p99_us,max_us
    with section total (one row), workload (each workload of a mix), step (each step of a ramp) and window (the
    measured window in about 100 equal slices; times in seconds from its start). A row in which no call was
    answered leaves its four latency fields empty (the text and HTML steps tables show -).

    JSON keys (latencies in microseconds, CPU % of one core):
      workload, call {method, data} (or null), mix {name: weight}, server, protocol (lean or grpc),
      tls {version, alpn, handshakes, resumed} (or null in cleartext), connections,
      concurrency, threads,
      rate (null = closed loop or a ramp), load_schedule {kind, start, step, step_s, end} (or null),
      warmup_s, seconds (measurement window), seeded [text], calls, ok, errors, errors_by_code {CODE_NAME: n},
      first_error_messages {CODE_NAME: text}, lost_calls, unsent_calls (open loop: scheduled, never sent),
      server_stream_limit (HTTP/2: the server's streams per connection when below the calls in flight, else null),
      calls_above_stream_limit (those calls, which waited in the bench),
      interrupted, stopped_by (text or null),
      by_workload {name: {calls, errors, latency_us}} (a mix only, else {}), connection_failures [text], calls_per_s,
      latency_us {count, min, mean, stddev, p50, p90, p99, p999, p9999, max},
      latency_uncorrected_us (same keys, or null for a closed loop), histogram [{from_us, to_us, count}],
      steps [{index, start_s, seconds, target_rate, calls, errors, calls_per_s, latency_us {p50, p90, p99, max}}],
      timeline {window_s, windows [{start_s, calls, errors, calls_per_s, latency_us {p50, p90, p99, max}}]},
      data {prefix, created, kept, deleted_locations, deleted_meal_records, failure, clean_up_command} (or null),
      bench_cpu_us_per_call, bench_cpu_pct, server_cpu_pct (or null), server_cpu_us_per_call (or null)
      (step and window percentiles are within about 2%)

    Exit status: 0 when the run made calls, none failed, none it scheduled went unsent (--rate), it was not stopped
    short (stopped_by) and its data was deleted (or kept), 1 when some calls failed or went unsent, the run stopped
    short or deleting failed, 2 for usage errors (an --output or --hist-out path that cannot be written
    included: checked before the run), 3 when the report (to a file or stdout) or the histogram could not be
    written, as for the rest of larder, 4 when the run could not start (connect, creating data, connections
    failing before any call was answered OK) or --clean-up could not delete, 130 when interrupted by Ctrl-C
    (SIGINT), 143 by SIGTERM.
    """
}
