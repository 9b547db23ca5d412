// Command larder_interop drives a larder-server with grpc-go, a stock gRPC client we did not
// write, through the stubs protoc-gen-go and protoc-gen-go-grpc generate from proto/ (at test
// time, into a temporary GOPATH: see clients/interop/test_grpc_go.py), plus grpc-go's own
// health and reflection packages.
//
//	larder_interop -addr HOST:PORT [-token TOKEN] SCENARIO [ARGS...]
//
// Each scenario makes its calls and writes one JSON object per line to stdout, each with a
// "step" name: for a call, its status (code, code_name, message), the request (proto3 JSON and
// the bytes grpc-go sent, hex) and the reply. It asserts nothing itself: the pytest side does,
// against what it sent and what the lean protocol answers for the same bytes. Exit status 0
// unless the program itself could not run (dial failed, bad arguments: exit 2, on stderr).
package main

import (
	"flag"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/grpclog"

	// Generated from proto/ at test time (never checked in).
	adminv1 "larder/gen/go/larder/admin/v1"
	larderv1 "larder/gen/go/larder/v1"
)

// callBound bounds every call: a hang guard for a busy machine, never a speed expectation.
const callBound = 60 * time.Second

var (
	addr  = flag.String("addr", "", "the server, HOST:PORT")
	token = flag.String("token", "", "the bearer token the server requires (auth scenario)")
	logs  = &captureLogger{}
)

// ---------------------------------------------------------------------------------------------
// Helpers for the test: what the server holds now

// state: the server's calls in flight and its location names.
func scenarioState() {
	c := dial()
	ctx, cancel := bounded()
	defer cancel()
	metrics, err := c.admin().GetMetrics(ctx, &adminv1.GetMetricsRequest{})
	if err != nil {
		fatal("GetMetrics: %v", err)
	}
	list, err := c.locations().ListLocations(ctx, &larderv1.ListLocationsRequest{})
	if err != nil {
		fatal("ListLocations: %v", err)
	}
	names, ids := []string{}, []string{}
	for _, l := range list.GetLocations() {
		names = append(names, l.GetName())
		ids = append(ids, l.GetId())
	}
	emit(step{"step": "state", "calls_in_flight": metrics.GetCallsInFlight(), "location_names": names, "location_ids": ids})
}

var scenarios = map[string]func(){
	"locations":         scenarioLocations,
	"groups":            scenarioGroups,
	"meals":             scenarioMeals,
	"admin":             scenarioAdmin,
	"errors":            scenarioErrors,
	"deadlines":         scenarioDeadlines,
	"deadline-locked":   scenarioDeadlineLocked,
	"cancel-locked":     scenarioCancelLocked,
	"cancel":            scenarioCancel,
	"metadata":          scenarioMetadata,
	"auth":              scenarioAuth,
	"health-reflection": scenarioHealthReflection,
	"concurrent":        scenarioConcurrent,
	"size":              scenarioSize,
	"gzip":              scenarioGzip,
	"keepalive":         scenarioKeepalive,
	"drain":             scenarioDrain,
	"idle":              scenarioIdle,
	"watchers":          scenarioWatchers,
	"large-replies":     scenarioLargeReplies,
	"tls":               scenarioTLS,
	"reconnect":         scenarioReconnect,
	"state":             scenarioState,
}

func main() {
	grpclog.SetLoggerV2(logs) // before any other use of grpc
	flag.Parse()
	if *addr == "" || flag.NArg() < 1 {
		fatal("usage: larder_interop -addr HOST:PORT [-token TOKEN] SCENARIO [ARGS...]")
	}
	run, ok := scenarios[flag.Arg(0)]
	if !ok {
		var names []string
		for name := range scenarios {
			names = append(names, name)
		}
		sort.Strings(names)
		fatal("unknown scenario %q; one of %s", flag.Arg(0), strings.Join(names, ", "))
	}
	run()
}
