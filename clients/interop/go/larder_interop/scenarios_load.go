package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding/gzip"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	// Generated from proto/ at test time (never checked in).
	larderv1 "larder/gen/go/larder/v1"
)

// ---------------------------------------------------------------------------------------------
// Load, limits, compression, stream slots, large replies

// concurrent PREFIX N: N goroutines on one ClientConn, each creates a location and reads it
// back; then N goroutines delete them.
func scenarioConcurrent() {
	prefix, n := arg(0, "prefix"), intArg(1, "n")
	c := dial()
	svc := c.locations()
	var wg sync.WaitGroup
	var mu sync.Mutex
	createCodes, getCodes, deleteCodes := map[string]int{}, map[string]int{}, map[string]int{}
	var messages []string
	ids := map[string]bool{}
	equal := 0
	note := func(codes map[string]int, err error) {
		codes[status.Code(err).String()]++
		if err != nil && len(messages) < 20 {
			messages = append(messages, err.Error())
		}
	}
	made := make([]*larderv1.Location, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 4*callBound)
			defer cancel()
			created, err := svc.CreateLocation(ctx, &larderv1.CreateLocationRequest{
				Location: &larderv1.Location{Name: fmt.Sprintf("%s %d", prefix, i), ColorHex: "#123456"}})
			var got *larderv1.Location
			var getErr error
			if err == nil {
				got, getErr = svc.GetLocation(ctx, &larderv1.GetLocationRequest{Id: created.GetId()})
			}
			mu.Lock()
			defer mu.Unlock()
			note(createCodes, err)
			if err == nil {
				made[i] = created
				ids[created.GetId()] = true
				note(getCodes, getErr)
				if getErr == nil && proto.Equal(got, created) && created.GetName() == fmt.Sprintf("%s %d", prefix, i) {
					equal++
				}
			}
		}(i)
	}
	wg.Wait()
	for _, m := range made {
		if m == nil {
			continue
		}
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 4*callBound)
			defer cancel()
			_, err := svc.DeleteLocation(ctx, &larderv1.DeleteLocationRequest{Id: id})
			mu.Lock()
			note(deleteCodes, err)
			mu.Unlock()
		}(m.GetId())
	}
	wg.Wait()
	emit(step{"step": "summary", "creates": createCodes, "gets": getCodes, "deletes": deleteCodes,
		"distinct_ids": len(ids), "read_back_equal": equal, "errors": messages, "connections": c.rec.count()})
}

// size LIMIT: GetLocation requests padded to just under and just over the server's message
// size limit (--max-frame-bytes), then an ordinary one, on one connection.
func scenarioSize() {
	limit := intArg(0, "limit")
	c := dial()
	svc := c.locations()
	missing := &larderv1.GetLocationRequest{Id: "00000000-0000-4000-8000-000000000000"}
	margin := 1024
	if limit < 16*margin {
		margin = limit / 16
	}
	get := func(name string, req proto.Message) {
		call(name, nil, nil, func(ctx context.Context) (interface{}, error) {
			return svc.GetLocation(ctx, req.(*larderv1.GetLocationRequest))
		}, step{"request_size": proto.Size(req)})
	}
	get("near_limit", padded(missing, limit-margin, []byte{0}))
	get("at_limit", padded(missing, limit, []byte{0}))
	get("over_limit", padded(missing, limit+margin, []byte{0}))
	get("after", missing)
	emit(step{"step": "connections", "count": c.rec.count()})
}

// gzip NAME: a connection whose calls are compressed with grpc.UseCompressor(gzip.Name).
func scenarioGzip() {
	name := arg(0, "name")
	limit := intArg(1, "limit")
	c := dial(grpc.WithDefaultCallOptions(grpc.UseCompressor(gzip.Name)))
	svc := c.locations()
	req := &larderv1.CreateLocationRequest{Location: &larderv1.Location{Name: name, ColorHex: "#aabbcc"}}
	created := call("create", nil, req, func(ctx context.Context) (interface{}, error) {
		return svc.CreateLocation(ctx, req)
	}).reply.(*larderv1.Location)
	get := &larderv1.GetLocationRequest{Id: created.GetId()}
	got := call("get", nil, get, func(ctx context.Context) (interface{}, error) { return svc.GetLocation(ctx, get) })
	emit(step{"step": "get_equals_create", "equal": got.err == nil && proto.Equal(v2(got.reply), created)})
	var shelves []string
	for i := 0; i < 12; i++ {
		r := &larderv1.CreateLocationRequest{Location: &larderv1.Location{
			Name: fmt.Sprintf("%s shelf %d of the long pantry wall of the long pantry wall", name, i), ColorHex: "#aabbcc"}}
		o := call(fmt.Sprintf("create_shelf_%d", i), nil, r, func(ctx context.Context) (interface{}, error) { return svc.CreateLocation(ctx, r) })
		if o.err == nil {
			shelves = append(shelves, o.reply.(*larderv1.Location).GetId())
		}
	}
	call("list", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
	// The same list on a connection that does not compress, to compare.
	plain := dial()
	call("list_uncompressed", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return plain.locations().ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
	// One call compressed on the plain connection, by call option.
	call("get_per_call_gzip", nil, get, func(ctx context.Context) (interface{}, error) {
		return plain.locations().GetLocation(ctx, get, grpc.UseCompressor(gzip.Name))
	})
	// Errors are checked after inflating, as ever.
	blank := &larderv1.CreateLocationRequest{Location: &larderv1.Location{Name: ""}}
	call("create_blank_name", nil, blank, func(ctx context.Context) (interface{}, error) { return svc.CreateLocation(ctx, blank) })
	// Random hex digits compress about 2:1: the limit applies to the inflated message.
	hexFiller := randomHex(64 * 1024)
	near := padded(get, limit-1024, hexFiller).(*larderv1.GetLocationRequest)
	call("get_near_limit_inflated", nil, nil, func(ctx context.Context) (interface{}, error) {
		return svc.GetLocation(ctx, near)
	}, step{"request_size": proto.Size(near)})
	over := padded(get, limit+1024, hexFiller).(*larderv1.GetLocationRequest)
	call("get_over_limit_inflated", nil, nil, func(ctx context.Context) (interface{}, error) {
		return svc.GetLocation(ctx, over)
	}, step{"request_size": proto.Size(over)})
	call("get_after", nil, get, func(ctx context.Context) (interface{}, error) { return svc.GetLocation(ctx, get) })
	// Zeros compress about 1000:1, a gzip bomb's ratio: a fresh connection may not inflate that
	// much (32 times what it sent, plus 256 KiB); it is still served afterwards.
	fresh := dial(grpc.WithDefaultCallOptions(grpc.UseCompressor(gzip.Name)))
	zeros := padded(get, limit-1024, []byte{0}).(*larderv1.GetLocationRequest)
	call("fresh_get_zeros", nil, nil, func(ctx context.Context) (interface{}, error) {
		return fresh.locations().GetLocation(ctx, zeros)
	}, step{"request_size": proto.Size(zeros)})
	// Compressed again at once: the bomb used up the connection's inflate share without
	// overdrawing it, and this call's own bytes earn 32 times as much (grpc-go compresses every
	// message, even one this small: 38 bytes go as 67). Counted over up to 100 calls, so a
	// regression shows as refusals rather than a hang.
	refusals, firstOK := 0, -1
	var lastErr error
	for i := 0; i < 100 && firstOK < 0; i++ {
		ctx, cancel := bounded()
		_, err := fresh.locations().GetLocation(ctx, get)
		cancel()
		if err == nil {
			firstOK = i
		} else {
			refusals++
			lastErr = err
		}
	}
	emit(statusFields(step{"step": "fresh_recovery", "refusals": refusals, "first_ok": firstOK}, lastErr))
	// "send it uncompressed": one call with grpc-encoding identity (grpc-go sends it as is).
	call("fresh_get_identity", nil, get, func(ctx context.Context) (interface{}, error) {
		return fresh.locations().GetLocation(ctx, get, grpc.UseCompressor("identity"))
	})
	for _, id := range append(shelves, created.GetId()) {
		del := &larderv1.DeleteLocationRequest{Id: id}
		call("cleanup", nil, del, func(ctx context.Context) (interface{}, error) { return svc.DeleteLocation(ctx, del) })
	}
	emit(step{"step": "connections", "count": c.rec.count(), "fresh": fresh.rec.count(), "plain": plain.rec.count()})
}

// watchers: on a server with --max-calls-per-connection 4, four health Watch streams take every
// slot (SETTINGS_MAX_CONCURRENT_STREAMS 4); a unary call started then waits in grpc-go for a
// slot; cancelling the Watch streams (RST_STREAM) frees theirs, and the call is served. Then 100
// more calls, never more than 4 at once.
func scenarioWatchers() {
	c := dial()
	type watch struct {
		cancel context.CancelFunc
		stream healthpb.Health_WatchClient
	}
	var watches []watch
	var firsts []string
	for i := 0; i < 4; i++ {
		ctx, cancel := bounded()
		stream, first, err := watchFirst(ctx, c.health())
		if err != nil {
			first = "error: " + err.Error()
		}
		firsts = append(firsts, first)
		watches = append(watches, watch{cancel, stream})
	}
	emit(step{"step": "watches_open", "first": firsts})
	done := make(chan struct{})
	go func() {
		call("queued_call", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
			return c.locations().ListLocations(ctx, &larderv1.ListLocationsRequest{})
		})
		close(done)
	}()
	// Whether the call has been sent or still waits in grpc-go cannot be seen from here; either
	// way it can only be served once a Watch gives its slot back.
	select {
	case <-done:
		emit(step{"step": "served_before_cancel", "served": true})
	case <-time.After(500 * time.Millisecond):
		emit(step{"step": "served_before_cancel", "served": false})
	}
	var ends []string
	for _, w := range watches {
		w.cancel()
		_, err := w.stream.Recv()
		ends = append(ends, status.Code(err).String())
	}
	emit(step{"step": "watches_cancelled", "codes": ends})
	<-done
	codes := tallyConcurrently(100, func(int) error {
		ctx, cancel := bounded()
		defer cancel()
		_, err := c.locations().ListLocations(ctx, &larderv1.ListLocationsRequest{})
		return err
	})
	emit(step{"step": "after", "codes": codes})
	emit(step{"step": "connections", "count": c.rec.count()})
}

// large-replies N: N meal records with 100-character names (concurrently), then pages of up to
// 1,000 of them (about 170 KB: more than grpc-go's initial 64 KiB stream window, so the reply
// waits for grpc-go's WINDOW_UPDATEs), plain and gzip.
func scenarioLargeReplies() {
	n := intArg(0, "n")
	c := dial()
	meals := c.meals()
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	ids := map[string]bool{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 4*callBound)
			defer cancel()
			name := fmt.Sprintf("%04d %s", i, strings.Repeat("long meal name ", 7))[:100]
			made, err := meals.CreateMealRecord(ctx, &larderv1.CreateMealRecordRequest{MealRecord: &larderv1.MealRecord{
				Name: name, Calories: int32(i), Category: larderv1.MealCategory_MEAL_CATEGORY_DINNER,
				EatenAt: timestamppb.New(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute))}})
			mu.Lock()
			codes[status.Code(err).String()]++
			if err == nil {
				ids[made.GetId()] = true
			}
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	emit(step{"step": "created", "codes": codes, "distinct_ids": len(ids)})
	pages := func(name string, client *client) {
		var listed []string
		token := ""
		pageSizes := []int{}
		var wire []int
		var err error
		for i := 0; i < 100; i++ {
			req := &larderv1.ListMealRecordsRequest{PageSize: 1000, PageToken: token}
			o := call(name+"_page", nil, req, func(ctx context.Context) (interface{}, error) {
				return client.meals().ListMealRecords(ctx, req)
			}, step{"page": i})
			if err = o.err; err != nil {
				break
			}
			page := o.reply.(*larderv1.ListMealRecordsResponse)
			pageSizes = append(pageSizes, len(page.GetMealRecords()))
			wire = append(wire, o.info.inWireLength)
			for _, m := range page.GetMealRecords() {
				listed = append(listed, m.GetId())
			}
			if token = page.GetNextPageToken(); token == "" {
				break
			}
		}
		unique := map[string]bool{}
		missing := 0
		for _, id := range listed {
			unique[id] = true
		}
		for id := range ids {
			if !unique[id] {
				missing++
			}
		}
		emit(statusFields(step{"step": name, "listed": len(listed), "distinct": len(unique), "missing": missing,
			"page_sizes": pageSizes, "wire_lengths": wire}, err))
	}
	pages("plain", c)
	pages("gzip", dial(grpc.WithDefaultCallOptions(grpc.UseCompressor(gzip.Name))))
}
