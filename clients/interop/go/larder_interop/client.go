package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	// Generated from proto/ at test time (never checked in).
	adminv1 "larder/gen/go/larder/admin/v1"
	larderv1 "larder/gen/go/larder/v1"
)

// ---------------------------------------------------------------------------------------------
// Connections and calls

type client struct {
	conn *grpc.ClientConn
	rec  *recorder
}

// dial connects (blocking until READY, bounded) with grpc-go's defaults plus extra.
func dial(extra ...grpc.DialOption) *client {
	rec := &recorder{}
	options := append([]grpc.DialOption{grpc.WithInsecure(), grpc.WithBlock(), grpc.WithStatsHandler(rec)}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	conn, err := grpc.DialContext(ctx, *addr, options...)
	if err != nil {
		fatal("dial %s: %v", *addr, err)
	}
	return &client{conn: conn, rec: rec}
}

func (c *client) locations() larderv1.LocationServiceClient {
	return larderv1.NewLocationServiceClient(c.conn)
}
func (c *client) groups() larderv1.CategoryGroupServiceClient {
	return larderv1.NewCategoryGroupServiceClient(c.conn)
}
func (c *client) items() larderv1.ItemCategoryServiceClient {
	return larderv1.NewItemCategoryServiceClient(c.conn)
}
func (c *client) meals() larderv1.MealRecordServiceClient {
	return larderv1.NewMealRecordServiceClient(c.conn)
}
func (c *client) health() healthpb.HealthClient { return healthpb.NewHealthClient(c.conn) }
func (c *client) admin() adminv1.AdminClient    { return adminv1.NewAdminClient(c.conn) }

func bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), callBound)
}

// outcome of one unary call; reply is a typed nil when err is not.
type outcome struct {
	reply interface{}
	err   error
	info  *callInfo
}

// call runs fn with a context of its own (bounded, unless ctx is given) and reports it as step
// name: status, method, request (JSON and the bytes grpc-go sent), reply.
func call(name string, ctx context.Context, request interface{},
	fn func(context.Context) (interface{}, error), extra ...step) outcome {
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = bounded()
		defer cancel()
	}
	ctx, info := withInfo(ctx)
	reply, err := fn(ctx)
	s := statusFields(step{"step": name}, err)
	info.mu.Lock()
	s["method"] = info.method
	if len(info.request) <= 64*1024 { // larger ones: their size says enough
		s["request_hex"] = hex.EncodeToString(info.request)
	}
	s["request_length"] = len(info.request)
	s["reply_compression"] = info.inCompression
	s["reply_length"] = info.inLength
	s["reply_wire_length"] = info.inWireLength
	s["request_wire_length"] = info.outWireLength
	info.mu.Unlock()
	if request != nil {
		s["request"] = pjson(request)
	}
	if err == nil {
		s["reply"] = pjson(reply)
	}
	for _, e := range extra {
		for k, v := range e {
			s[k] = v
		}
	}
	emit(s)
	return outcome{reply: reply, err: err, info: info}
}

func mask(paths ...string) *fieldmaskpb.FieldMask { return &fieldmaskpb.FieldMask{Paths: paths} }

func ts(rfc3339 string) *timestamppb.Timestamp {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		fatal("timestamp %q: %v", rfc3339, err)
	}
	return timestamppb.New(t)
}

func arg(i int, name string) string {
	if flag.NArg() <= i+1 {
		fatal("%s needs argument %d (%s)", flag.Arg(0), i+1, name)
	}
	return flag.Arg(i + 1)
}

func intArg(i int, name string) int {
	n, err := strconv.Atoi(arg(i, name))
	if err != nil {
		fatal("%s: %v", name, err)
	}
	return n
}

// padded: m with an unknown length-delimited field 15 (which the server skips) of filler
// repeated, so that it marshals to exactly total bytes.
func padded(m proto.Message, total int, filler []byte) proto.Message {
	m = proto.Clone(m)
	base := proto.Size(m)
	for lengthBytes := 1; lengthBytes <= 5; lengthBytes++ {
		body := total - base - 1 - lengthBytes
		if body >= 0 && protowire.SizeVarint(uint64(body)) == lengthBytes {
			data := make([]byte, body)
			for i := 0; i < body; i += len(filler) {
				copy(data[i:], filler)
			}
			unknown := protowire.AppendTag(nil, 15, protowire.BytesType)
			unknown = protowire.AppendBytes(unknown, data)
			m.ProtoReflect().SetUnknown(unknown)
			if proto.Size(m) != total {
				fatal("padded to %d bytes, not %d", proto.Size(m), total)
			}
			return m
		}
	}
	fatal("cannot pad a %d-byte message to %d bytes", base, total)
	return nil
}

func randomHex(n int) []byte {
	raw := make([]byte, (n+1)/2)
	if _, err := rand.Read(raw); err != nil {
		fatal("random: %v", err)
	}
	return []byte(hex.EncodeToString(raw)[:n])
}

// rawCodec sends and receives bytes as they are (grpc.ForceCodec), for a request no stub can
// build: one that does not decode.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// tallyConcurrently runs call n times at once (each with its index) and counts the status
// codes the calls ended with, by name.
func tallyConcurrently(n int, call func(i int) error) map[string]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := call(i)
			mu.Lock()
			codes[status.Code(err).String()]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	return codes
}

// watchFirst opens a health Watch on ctx and reads its first message: the stream (as Watch
// returned it), that message's status by name ("" when none came) and the error that stopped it.
func watchFirst(ctx context.Context, health healthpb.HealthClient) (healthpb.Health_WatchClient, string, error) {
	stream, err := health.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return stream, "", err
	}
	reply, err := stream.Recv()
	if err != nil {
		return stream, "", err
	}
	return stream, reply.GetStatus().String(), nil
}
