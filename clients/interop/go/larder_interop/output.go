package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	protoV1 "github.com/golang/protobuf/proto"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// ---------------------------------------------------------------------------------------------
// Output

var outMu sync.Mutex

type step map[string]interface{}

func emit(s step) {
	b, err := json.Marshal(s)
	if err != nil {
		fatal("json: %v", err)
	}
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func fatal(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "larder_interop: "+format+"\n", args...)
	os.Exit(2)
}

var jsonOptions = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// v2 is a message of either API: the stubs generated from proto/ are APIv2; grpc-go 1.33's own
// health and reflection packages are APIv1 (github.com/golang/protobuf), seen through its shim.
func v2(m interface{}) proto.Message {
	switch m := m.(type) {
	case proto.Message:
		return m
	case protoV1.Message:
		return protoV1.MessageV2(m)
	}
	fatal("%T is not a protobuf message", m)
	return nil
}

// pjson is a message as proto3 JSON (proto field names, every field), for the output.
func pjson(m interface{}) json.RawMessage {
	b, err := jsonOptions.Marshal(v2(m))
	if err != nil {
		fatal("protojson: %v", err)
	}
	return json.RawMessage(b)
}

// statusFields: the gRPC status of err (OK for nil) as grpc-go reports it.
func statusFields(s step, err error) step {
	st := status.Convert(err)
	s["code"] = int(st.Code())
	s["code_name"] = st.Code().String()
	s["message"] = st.Message()
	return s
}

// ---------------------------------------------------------------------------------------------
// What grpc-go saw: a stats.Handler per connection (connections made, and per call the method,
// the request bytes it sent and the reply's compression and sizes)

type callInfo struct {
	mu            sync.Mutex
	method        string
	request       []byte
	outWireLength int
	inCompression string
	inLength      int
	inWireLength  int
	inPayloads    int
}

type infoKey struct{}

func withInfo(ctx context.Context) (context.Context, *callInfo) {
	info := &callInfo{}
	return context.WithValue(ctx, infoKey{}, info), info
}

type recorder struct {
	mu          sync.Mutex
	connections int
}

func (r *recorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (r *recorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

func (r *recorder) HandleConn(_ context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnBegin); ok {
		r.mu.Lock()
		r.connections++
		r.mu.Unlock()
	}
}

func (r *recorder) HandleRPC(ctx context.Context, s stats.RPCStats) {
	info, _ := ctx.Value(infoKey{}).(*callInfo)
	if info == nil {
		return
	}
	info.mu.Lock()
	defer info.mu.Unlock()
	switch s := s.(type) {
	case *stats.OutHeader:
		info.method = s.FullMethod
	case *stats.OutPayload:
		info.request = append([]byte(nil), s.Data...)
		info.outWireLength = s.WireLength
	case *stats.InHeader:
		info.inCompression = s.Compression
	case *stats.InPayload:
		info.inLength = s.Length
		info.inWireLength = s.WireLength
		info.inPayloads++
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.connections
}

// ---------------------------------------------------------------------------------------------
// grpc-go's log, kept (warnings and errors also go to stderr) so a scenario can report what
// grpc-go noticed, e.g. a GOAWAY ENHANCE_YOUR_CALM.

type captureLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *captureLogger) add(severity string, text string) {
	l.mu.Lock()
	if len(l.lines) < 20000 {
		l.lines = append(l.lines, severity+": "+text)
	}
	l.mu.Unlock()
	if severity != "INFO" {
		fmt.Fprintf(os.Stderr, "grpc-go %s: %s\n", severity, text)
	}
}

func (l *captureLogger) matching(part string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var found []string
	for _, line := range l.lines {
		if strings.Contains(line, part) {
			found = append(found, line)
		}
	}
	return found
}

func (l *captureLogger) Info(args ...interface{})   { l.add("INFO", fmt.Sprint(args...)) }
func (l *captureLogger) Infoln(args ...interface{}) { l.add("INFO", fmt.Sprint(args...)) }
func (l *captureLogger) Infof(format string, args ...interface{}) {
	l.add("INFO", fmt.Sprintf(format, args...))
}
func (l *captureLogger) Warning(args ...interface{})   { l.add("WARNING", fmt.Sprint(args...)) }
func (l *captureLogger) Warningln(args ...interface{}) { l.add("WARNING", fmt.Sprint(args...)) }
func (l *captureLogger) Warningf(format string, args ...interface{}) {
	l.add("WARNING", fmt.Sprintf(format, args...))
}
func (l *captureLogger) Error(args ...interface{})   { l.add("ERROR", fmt.Sprint(args...)) }
func (l *captureLogger) Errorln(args ...interface{}) { l.add("ERROR", fmt.Sprint(args...)) }
func (l *captureLogger) Errorf(format string, args ...interface{}) {
	l.add("ERROR", fmt.Sprintf(format, args...))
}
func (l *captureLogger) Fatal(args ...interface{})   { l.add("FATAL", fmt.Sprint(args...)); os.Exit(2) }
func (l *captureLogger) Fatalln(args ...interface{}) { l.add("FATAL", fmt.Sprint(args...)); os.Exit(2) }
func (l *captureLogger) Fatalf(format string, args ...interface{}) {
	l.add("FATAL", fmt.Sprintf(format, args...))
	os.Exit(2)
}
func (l *captureLogger) V(int) bool { return true }
