package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"io/ioutil"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/oauth"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	// Generated from proto/ at test time (never checked in).
	larderv1 "larder/gen/go/larder/v1"
)

// ---------------------------------------------------------------------------------------------
// Connections: keepalive pings, TLS, the idle timeout

// keepalive: grpc-go clients with keepalive against the server's ping policy (a PING less
// than 5 min after the previous one with no data sent between is a strike; the third strike
// gets GOAWAY ENHANCE_YOUR_CALM "too_many_pings"). Three idle connections, and a fourth
// holding a health Watch open:
//
//	default:      grpc-go's default (no keepalive pings)
//	idle_pinger:  Time 10 s (grpc-go's minimum), PermitWithoutStream: pings while idle
//	idle_quiet:   Time 10 s, PermitWithoutStream false: no pings while idle
//	watching:     Time 10 s, PermitWithoutStream false, one Watch open: pings while it is open
//
// It waits (at most -bound seconds) until idle_pinger and watching have each left READY (or
// their Watch has ended), then reports every connection's state and calls on each.
func scenarioKeepalive() {
	bound := time.Duration(intArg(0, "bound seconds")) * time.Second
	params := func(permit bool) grpc.DialOption {
		return grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 20 * time.Second, PermitWithoutStream: permit})
	}
	conns := map[string]*client{
		"default":     dial(),
		"idle_pinger": dial(params(true)),
		"idle_quiet":  dial(params(false)),
		"watching":    dial(params(false)),
	}
	order := []string{"default", "idle_pinger", "idle_quiet", "watching"}
	for _, name := range order {
		c := conns[name]
		call("first_call "+name, nil, &healthpb.HealthCheckRequest{}, func(ctx context.Context) (interface{}, error) {
			return c.health().Check(ctx, &healthpb.HealthCheckRequest{})
		})
	}
	began := time.Now()
	deadline, cancelAll := context.WithTimeout(context.Background(), bound)
	defer cancelAll()

	type watchEnd struct {
		statuses []string
		err      error
		after    time.Duration
	}
	watchDone := make(chan watchEnd, 1)
	go func() {
		stream, err := conns["watching"].health().Watch(deadline, &healthpb.HealthCheckRequest{})
		var statuses []string
		for i := 0; err == nil && i < 1000; i++ {
			var reply *healthpb.HealthCheckResponse
			if reply, err = stream.Recv(); err == nil {
				statuses = append(statuses, reply.GetStatus().String())
			}
		}
		watchDone <- watchEnd{statuses, err, time.Since(began)}
	}()
	type left struct {
		left  bool
		after time.Duration
	}
	leftReady := make(chan left, 1)
	go func() {
		// True once the connection is no longer READY (grpc-go may be READY again on a new
		// connection by the time anyone looks: it reconnects at once).
		changed := conns["idle_pinger"].conn.WaitForStateChange(deadline, connectivity.Ready)
		leftReady <- left{changed, time.Since(began)}
	}()
	pingerLeft := <-leftReady
	end := <-watchDone
	states := step{}
	for _, name := range order {
		states[name] = conns[name].conn.GetState().String()
	}
	emit(step{"step": "after_idle", "idle_pinger_left_ready": pingerLeft.left,
		"idle_pinger_left_ready_after_s": pingerLeft.after.Seconds(), "states": states, "bound_reached": deadline.Err() != nil})
	emit(statusFields(step{"step": "watch_end", "statuses": end.statuses, "after_s": end.after.Seconds()}, end.err))
	emit(step{"step": "grpc_go_log", "enhance_your_calm": logs.matching("ErrCodeEnhanceYourCalm")})
	for _, name := range order {
		c := conns[name]
		call("call_after "+name, nil, &healthpb.HealthCheckRequest{}, func(ctx context.Context) (interface{}, error) {
			return c.health().Check(ctx, &healthpb.HealthCheckRequest{})
		})
	}
	counts := step{}
	for _, name := range order {
		counts[name] = conns[name].rec.count()
	}
	emit(step{"step": "connections", "counts": counts})
}

// tls CA OTHER_CA [CLIENT_CERT CLIENT_KEY]: grpc-go with credentials.NewTLS (ALPN h2) against
// a server with --tls-cert: a connection trusting the server's CA, one with a client
// certificate (when given), one trusting another CA, and a plaintext one. With -token, the
// token also goes as oauth.NewOauthAccess per-RPC credentials (which require TLS).
func scenarioTLS() {
	caFile, otherFile := arg(0, "ca"), arg(1, "other ca")
	pool := func(file string) *x509.CertPool {
		pem, err := ioutil.ReadFile(file)
		if err != nil {
			fatal("%v", err)
		}
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM(pem) {
			fatal("no certificate in %s", file)
		}
		return p
	}
	secureDial := func(config *tls.Config, extra ...grpc.DialOption) *grpc.ClientConn {
		var creds grpc.DialOption = grpc.WithInsecure()
		if config != nil {
			creds = grpc.WithTransportCredentials(credentials.NewTLS(config))
		}
		// Not blocking: a handshake that fails shows as the status of the calls.
		conn, err := grpc.Dial(*addr, append([]grpc.DialOption{creds}, extra...)...)
		if err != nil {
			fatal("dial: %v", err)
		}
		return conn
	}
	var perRPC []grpc.DialOption
	if *token != "" {
		perRPC = append(perRPC, grpc.WithPerRPCCredentials(oauth.NewOauthAccess(&oauth2.Token{AccessToken: *token})))
	}
	try := func(name string, conn *grpc.ClientConn) {
		call(name+" health", nil, &healthpb.HealthCheckRequest{}, func(ctx context.Context) (interface{}, error) {
			return healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		})
		var peerInfo peer.Peer
		call(name+" list", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
			return larderv1.NewLocationServiceClient(conn).ListLocations(ctx, &larderv1.ListLocationsRequest{}, grpc.Peer(&peerInfo))
		})
		info := step{"step": name + " peer", "auth_type": ""}
		if peerInfo.AuthInfo != nil {
			info["auth_type"] = peerInfo.AuthInfo.AuthType()
			if t, ok := peerInfo.AuthInfo.(credentials.TLSInfo); ok {
				info["alpn"] = t.State.NegotiatedProtocol
				info["tls_version"] = t.State.Version
			}
		}
		emit(info)
	}
	try("secure", secureDial(&tls.Config{RootCAs: pool(caFile), ServerName: "localhost"}, perRPC...))
	if flag.NArg() > 4 {
		cert, err := tls.LoadX509KeyPair(arg(2, "client cert"), arg(3, "client key"))
		if err != nil {
			fatal("client certificate: %v", err)
		}
		try("mutual", secureDial(&tls.Config{RootCAs: pool(caFile), ServerName: "localhost", Certificates: []tls.Certificate{cert}}, perRPC...))
	}
	try("untrusted", secureDial(&tls.Config{RootCAs: pool(otherFile), ServerName: "localhost"}))
	try("plaintext", secureDial(nil))
}

// idle BOUND: against a server with a short --idle-timeout. Connection "idle" has no call open,
// "watching" holds a health Watch open. Waits (at most BOUND seconds) until "idle" has been
// closed by the server twice (GOAWAY NO_ERROR; grpc-go reconnects each time), so the watching
// connection has been without any message for at least one idle timeout by the server's own
// clock; then reports both and calls on both.
func scenarioIdle() {
	bound := time.Duration(intArg(0, "bound seconds")) * time.Second
	// The Watch opens first, on the first connection made: a connection is idle only until its
	// first call, and a busy machine may take longer than the idle timeout to get there.
	watching := dial()
	deadline, cancelAll := context.WithTimeout(context.Background(), bound)
	defer cancelAll()
	watchCtx, stopWatch := context.WithCancel(deadline)
	stream, err := watching.health().Watch(watchCtx, &healthpb.HealthCheckRequest{})
	if err != nil {
		fatal("watch: %v", err)
	}
	first, err := stream.Recv()
	if err != nil {
		fatal("watch: %v", err)
	}
	idle := dial()
	call("first_call idle", nil, &healthpb.HealthCheckRequest{}, func(ctx context.Context) (interface{}, error) {
		return idle.health().Check(ctx, &healthpb.HealthCheckRequest{})
	})
	watchEnded := make(chan error, 1)
	go func() {
		_, err := stream.Recv()
		watchEnded <- err
	}()
	closes := 0
	for closes < 2 && deadline.Err() == nil {
		state := idle.conn.GetState()
		if state == connectivity.Ready {
			if !idle.conn.WaitForStateChange(deadline, state) {
				break
			}
			closes++
		} else {
			idle.conn.WaitForStateChange(deadline, state) // until it reconnects
		}
	}
	ended := "no"
	select {
	case err := <-watchEnded:
		ended = "ended: " + status.Convert(err).Code().String() + ": " + status.Convert(err).Message()
	default:
	}
	emit(step{"step": "after_idle", "idle_closes": closes, "bound_reached": deadline.Err() != nil,
		"watch_first": first.GetStatus().String(), "watch_ended": ended,
		"watching_state": watching.conn.GetState().String()})
	for name, c := range map[string]*client{"idle": idle, "watching": watching} {
		c := c
		call("call_after "+name, nil, &healthpb.HealthCheckRequest{}, func(ctx context.Context) (interface{}, error) {
			return c.health().Check(ctx, &healthpb.HealthCheckRequest{})
		})
	}
	stopWatch()
	emit(statusFields(step{"step": "watch_cancelled"}, <-watchEnded))
	emit(step{"step": "connections", "idle": idle.rec.count(), "watching": watching.rec.count()})
}
