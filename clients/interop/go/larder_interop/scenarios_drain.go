package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	// Generated from proto/ at test time (never checked in).
	larderv1 "larder/gen/go/larder/v1"
)

// ---------------------------------------------------------------------------------------------
// Drain

// drain PREFIX: 8 goroutines create locations on one ClientConn until a call fails; after 50
// acknowledged creates it says so ("progress" step), for the test to SIGTERM the server. A
// health Watch is open on the same connection meanwhile.
func scenarioDrain() {
	prefix := arg(0, "prefix")
	c := dial()
	svc := c.locations()
	var mu sync.Mutex
	var acknowledged []string
	refused := map[string]int{}
	var messages []string
	said := false
	// A health Watch open on the same connection through the drain.
	watchCtx, stopWatch := bounded()
	defer stopWatch()
	type watchEnd struct {
		statuses []string
		err      error
	}
	watchDone := make(chan watchEnd, 1)
	stream, err := c.health().Watch(watchCtx, &healthpb.HealthCheckRequest{})
	if err != nil {
		fatal("watch: %v", err)
	}
	first, err := stream.Recv()
	if err != nil {
		fatal("watch: %v", err)
	}
	go func() {
		statuses := []string{first.GetStatus().String()}
		var err error
		for i := 0; err == nil && i < 1000; i++ {
			var reply *healthpb.HealthCheckResponse
			if reply, err = stream.Recv(); err == nil {
				statuses = append(statuses, reply.GetStatus().String())
			}
		}
		watchDone <- watchEnd{statuses, err}
	}()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				ctx, cancel := bounded()
				made, err := svc.CreateLocation(ctx, &larderv1.CreateLocationRequest{
					Location: &larderv1.Location{Name: fmt.Sprintf("%s %d-%d", prefix, w, i), ColorHex: "#123456"}})
				cancel()
				mu.Lock()
				if err != nil {
					refused[status.Code(err).String()]++
					if len(messages) < 10 {
						messages = append(messages, err.Error())
					}
					mu.Unlock()
					return
				}
				acknowledged = append(acknowledged, made.GetId())
				if len(acknowledged) >= 50 && !said {
					said = true
					emit(step{"step": "progress", "acknowledged": len(acknowledged)})
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	emit(step{"step": "summary", "acknowledged": acknowledged, "refused": refused, "errors": messages})
	end := <-watchDone
	if end.err == io.EOF {
		end.err = nil // the stream ended with OK
	}
	emit(statusFields(step{"step": "watch", "statuses": end.statuses}, end.err))
}

// reconnect NAME: creates a location, says "waiting", and once stdin has a line (the test has
// restarted the server on the same port and database) reads it back through the same
// ClientConn, with WaitForReady (so the call waits for the new connection instead of failing
// fast while grpc-go reconnects).
func scenarioReconnect() {
	name := arg(0, "name")
	c := dial()
	svc := c.locations()
	req := &larderv1.CreateLocationRequest{Location: &larderv1.Location{Name: name, ColorHex: "#123456"}}
	created := call("create", nil, req, func(ctx context.Context) (interface{}, error) {
		return svc.CreateLocation(ctx, req)
	}).reply.(*larderv1.Location)
	emit(step{"step": "waiting"})
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fatal("stdin: %v", err)
	}
	get := &larderv1.GetLocationRequest{Id: created.GetId()}
	got := call("get_after_restart", nil, get, func(ctx context.Context) (interface{}, error) {
		return svc.GetLocation(ctx, get, grpc.WaitForReady(true))
	})
	emit(step{"step": "read_back_equal", "equal": got.err == nil && proto.Equal(v2(got.reply), created)})
	emit(step{"step": "connections", "count": c.rec.count()})
}
