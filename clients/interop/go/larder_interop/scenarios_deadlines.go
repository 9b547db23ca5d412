package main

import (
	"context"
	"fmt"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	// Generated from proto/ at test time (never checked in).
	adminv1 "larder/gen/go/larder/admin/v1"
	larderv1 "larder/gen/go/larder/v1"
)

// ---------------------------------------------------------------------------------------------
// Deadlines and cancellation

// deadlines: calls with a deadline they meet, in every grpc-timeout unit grpc-go sends; a
// deadline already past; a health Watch (which stays open) ended by its deadline.
func scenarioDeadlines() {
	c := dial()
	svc := c.locations()
	for _, seconds := range []int64{30, 2000, 200000, 1000000000, 9000000000} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second)
		call(fmt.Sprintf("list_within_%ds", seconds), ctx, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
			return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
		})
		call(fmt.Sprintf("health_within_%ds", seconds), ctx, &healthpb.HealthCheckRequest{}, func(ctx context.Context) (interface{}, error) {
			return c.health().Check(ctx, &healthpb.HealthCheckRequest{})
		})
		cancel()
	}
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	call("list_deadline_already_past", past, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
	cancel()
	// Health Watch sends the status and stays open: only its deadline ends it, DEADLINE_EXCEEDED
	// whichever side sees the deadline first (grpc-go, or the server's 250 ms check).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	watchUntilEnd("watch_until_deadline", ctx, c)
	cancel()
	call("list_after", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
	emit(step{"step": "connections", "count": c.rec.count()})
}

// watchUntilEnd opens a health Watch and reads it until it ends (bounded by ctx).
func watchUntilEnd(name string, ctx context.Context, c *client) {
	stream, err := c.health().Watch(ctx, &healthpb.HealthCheckRequest{})
	var statuses []string
	for i := 0; err == nil && i < 1000; i++ {
		var reply *healthpb.HealthCheckResponse
		reply, err = stream.Recv()
		if err == nil {
			statuses = append(statuses, reply.GetStatus().String())
		}
	}
	emit(statusFields(step{"step": name, "statuses": statuses}, err))
}

// deadline-locked NAME: run while the test holds the database's write lock (the server with
// --busy-timeout long): a CreateLocation with a 2 s deadline cannot finish by it.
func scenarioDeadlineLocked() {
	name := arg(0, "name")
	c := dial()
	svc := c.locations()
	call("read_while_locked", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	req := &larderv1.CreateLocationRequest{Location: &larderv1.Location{Name: name, ColorHex: "#010203"}}
	call("create_past_deadline", ctx, req, func(ctx context.Context) (interface{}, error) { return svc.CreateLocation(ctx, req) })
	cancel()
	call("read_after", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
	emit(step{"step": "connections", "count": c.rec.count()})
}

// startedCalls: the server's count of calls of method it has started (Admin.GetMetrics).
func startedCalls(c *client, method string) (uint64, error) {
	ctx, cancel := bounded()
	defer cancel()
	metrics, err := c.admin().GetMetrics(ctx, &adminv1.GetMetricsRequest{})
	if err != nil {
		return 0, err
	}
	for _, m := range metrics.GetMethods() {
		if m.GetMethod() == method {
			return m.GetCallsStarted(), nil
		}
	}
	return 0, nil
}

// cancel-locked NAME: run while the test holds the database's write lock: a CreateLocation the
// server has started (its metrics say so) is cancelled by its context; the connection serves on.
func scenarioCancelLocked() {
	name := arg(0, "name")
	c := dial()
	svc := c.locations()
	const method = "/larder.v1.LocationService/CreateLocation"
	before, err := startedCalls(c, method)
	if err != nil {
		fatal("metrics: %v", err)
	}
	parent, stop := bounded()
	defer stop()
	ctx, cancel := context.WithCancel(parent)
	req := &larderv1.CreateLocationRequest{Location: &larderv1.Location{Name: name, ColorHex: "#010203"}}
	done := make(chan struct{})
	go func() {
		call("create_cancelled", ctx, req, func(ctx context.Context) (interface{}, error) { return svc.CreateLocation(ctx, req) })
		close(done)
	}()
	started := false
	for i := 0; i < 600 && !started; i++ { // at most 60 s
		now, err := startedCalls(c, method)
		started = err == nil && now > before
		if !started {
			time.Sleep(100 * time.Millisecond)
		}
	}
	emit(step{"step": "server_started_the_call", "started": started})
	cancel()
	<-done
	call("read_after", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
	emit(step{"step": "connections", "count": c.rec.count()})
}

// cancel: calls cancelled as soon as they start, a Watch cancelled after its first message;
// then the same connection serves 100 calls.
func scenarioCancel() {
	c := dial()
	meals := c.meals()
	codes := tallyConcurrently(50, func(int) error {
		ctx, cancel := context.WithCancel(context.Background())
		result := make(chan error, 1)
		go func() {
			_, err := meals.ListMealRecords(ctx, &larderv1.ListMealRecordsRequest{PageSize: 100})
			result <- err
		}()
		cancel()
		return <-result
	})
	emit(step{"step": "cancelled_at_once", "codes": codes})

	ctx, cancel := bounded()
	stream, first, err := watchFirst(ctx, c.health())
	cancel()
	if err == nil {
		_, err = stream.Recv()
	}
	emit(statusFields(step{"step": "watch_cancelled", "first": first}, err))

	after := tallyConcurrently(100, func(int) error {
		ctx, cancel := bounded()
		defer cancel()
		_, err := meals.ListMealRecords(ctx, &larderv1.ListMealRecordsRequest{PageSize: 1})
		return err
	})
	emit(step{"step": "after", "codes": after})
	emit(step{"step": "connections", "count": c.rec.count()})
}
