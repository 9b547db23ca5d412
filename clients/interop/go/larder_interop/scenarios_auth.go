package main

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	// Generated from proto/ at test time (never checked in).
	larderv1 "larder/gen/go/larder/v1"
)

// ---------------------------------------------------------------------------------------------
// Metadata and auth

// metadata: custom ASCII and -bin metadata; the header list limit the server advertises.
func scenarioMetadata() {
	c := dial()
	svc := c.locations()
	list := func(name string, ctx context.Context) {
		var header, trailer metadata.MD
		o := call(name, ctx, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
			return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{}, grpc.Header(&header), grpc.Trailer(&trailer))
		})
		_ = o
		emit(step{"step": name + " metadata", "header": mdMap(header), "trailer": mdMap(trailer)})
	}
	ctx, cancel := bounded()
	list("plain", ctx)
	cancel()
	ctx, cancel = bounded()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-request-id", "abc-123", "x-trace-bin", string([]byte{0, 1, 0xfe, 0xff}),
		"x-multi", "one", "x-multi", "two", "x-spaced", "  padded value  ")
	list("custom", ctx)
	cancel()
	// grpc-go counts its header list (name + value + 32 per field) against the server's
	// SETTINGS_MAX_HEADER_LIST_SIZE before it sends.
	ctx, cancel = bounded()
	list("near_header_limit", metadata.AppendToOutgoingContext(ctx, "x-big", strings.Repeat("a", 7000)))
	cancel()
	ctx, cancel = bounded()
	list("over_header_limit", metadata.AppendToOutgoingContext(ctx, "x-big", strings.Repeat("a", 9000)))
	cancel()
	// content-type application/grpc+proto (a codec's content subtype), which the server takes.
	call("content_subtype_proto", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{}, grpc.CallContentSubtype("proto"))
	})
	ctx, cancel = bounded()
	list("after", ctx)
	cancel()
	emit(step{"step": "connections", "count": c.rec.count()})
}

func mdMap(md metadata.MD) map[string][]string {
	out := map[string][]string{}
	for k, v := range md {
		out[k] = v
	}
	return out
}

type bearer struct{ token string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}
func (bearer) RequireTransportSecurity() bool { return false }

// auth: against a server started with --auth-token-file holding -token.
func scenarioAuth() {
	c := dial()
	svc := c.locations()
	list := func(name string, authorization string) {
		ctx, cancel := bounded()
		defer cancel()
		if authorization != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization)
		}
		call(name, ctx, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
			return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
		})
	}
	list("no_token", "")
	list("wrong_token", "Bearer wrong")
	list("right_token", "Bearer "+*token)
	list("lower_case_scheme", "bearer "+*token)
	list("basic_scheme", "Basic "+*token)
	call("health_without_token", nil, &healthpb.HealthCheckRequest{}, func(ctx context.Context) (interface{}, error) {
		return c.health().Check(ctx, &healthpb.HealthCheckRequest{})
	})
	listServicesAlpha("reflection_without_token", c, "")
	listServicesAlpha("reflection_with_token", c, "Bearer "+*token)
	// PerRPCCredentials that do not require transport security, on a connection of their own.
	withCreds := dial(grpc.WithPerRPCCredentials(bearer{*token}))
	call("per_rpc_credentials", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return withCreds.locations().ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
}
