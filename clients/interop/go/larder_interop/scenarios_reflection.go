package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	alphapb "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	// Generated from proto/ at test time (never checked in). grpc/reflection/v1 is mapped to a
	// path of ours (M option) so it does not shadow grpc-go's google.golang.org/grpc/...
	reflectv1 "larder.interop/grpc/reflection/v1"
)

// ---------------------------------------------------------------------------------------------
// Health and reflection

// listServicesAlpha: grpc-go's own v1alpha reflection client, ListServices.
func listServicesAlpha(name string, c *client, authorization string) []string {
	ctx, cancel := bounded()
	defer cancel()
	if authorization != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization)
	}
	var services []string
	stream, err := alphapb.NewServerReflectionClient(c.conn).ServerReflectionInfo(ctx)
	if err == nil {
		err = stream.Send(&alphapb.ServerReflectionRequest{MessageRequest: &alphapb.ServerReflectionRequest_ListServices{ListServices: ""}})
		if err == io.EOF { // the server ended the stream: RecvMsg tells its status (grpc-go's ClientStream.SendMsg)
			_, err = stream.Recv()
		}
	}
	if err == nil {
		var reply *alphapb.ServerReflectionResponse
		if reply, err = stream.Recv(); err == nil {
			for _, s := range reply.GetListServicesResponse().GetService() {
				services = append(services, s.GetName())
			}
			if e := reply.GetErrorResponse(); e != nil {
				err = status.Error(codes.Unknown, "error response: "+e.GetErrorMessage())
			}
		}
	}
	if err == nil {
		err = stream.CloseSend()
	}
	if err == nil {
		_, err = stream.Recv()
		if err == io.EOF {
			err = nil
		}
	}
	emit(statusFields(step{"step": name, "services": services}, err))
	return services
}

// methodsOf: a service's methods as "Name(input) returns (output)" with stream markers.
func methodsOf(s protoreflect.ServiceDescriptor) []string {
	var out []string
	for i := 0; i < s.Methods().Len(); i++ {
		m := s.Methods().Get(i)
		in, outS := "", ""
		if m.IsStreamingClient() {
			in = "stream "
		}
		if m.IsStreamingServer() {
			outS = "stream "
		}
		out = append(out, fmt.Sprintf("%s(%s%s) returns (%s%s)", m.Name(), in, m.Input().FullName(), outS, m.Output().FullName()))
	}
	sort.Strings(out)
	return out
}

// health-reflection: health Check and Watch through grpc_health_v1; reflection through grpc-go's
// v1alpha client and the v1 stubs generated from proto/: services, and each larder service's
// descriptor (files built with protodesc) against the one compiled in from proto/.
func scenarioHealthReflection() {
	c := dial()
	health := c.health()
	checkService := func(name, service string) {
		req := &healthpb.HealthCheckRequest{Service: service}
		call(name, nil, req, func(ctx context.Context) (interface{}, error) { return health.Check(ctx, req) })
	}
	checkService("check_server", "")
	services := listServicesAlpha("list_services_v1alpha", c, "")
	for _, s := range services {
		checkService("check "+s, s)
	}
	checkService("check_unknown", "no.such.Service")

	ctx, cancel := bounded()
	_, first, err := watchFirst(ctx, health)
	cancel()
	emit(statusFields(step{"step": "watch_first", "first": first}, err))

	// v1, through the stubs generated from proto/grpc/reflection/v1.
	ctx, cancel = bounded()
	v1, err := reflectv1.NewServerReflectionClient(c.conn).ServerReflectionInfo(ctx)
	var v1Services []string
	if err == nil {
		err = v1.Send(&reflectv1.ServerReflectionRequest{MessageRequest: &reflectv1.ServerReflectionRequest_ListServices{}})
		if err == io.EOF {
			_, err = v1.Recv()
		}
	}
	if err == nil {
		var reply *reflectv1.ServerReflectionResponse
		if reply, err = v1.Recv(); err == nil {
			for _, s := range reply.GetListServicesResponse().GetService() {
				v1Services = append(v1Services, s.GetName())
			}
		}
	}
	if err == nil {
		err = v1.CloseSend()
	}
	cancel()
	emit(statusFields(step{"step": "list_services_v1", "services": v1Services}, err))

	// Each service's file (and what it imports) through one v1alpha stream, built into
	// descriptors with protodesc, compared with the descriptors compiled in from proto/.
	ctx, cancel = bounded()
	defer cancel()
	stream2, err := alphapb.NewServerReflectionClient(c.conn).ServerReflectionInfo(ctx)
	if err != nil {
		emit(statusFields(step{"step": "file_containing_symbol"}, err))
		return
	}
	files := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	for _, s := range services {
		if !strings.HasPrefix(s, "larder.") && !strings.HasPrefix(s, "grpc.health.") {
			continue
		}
		err = stream2.Send(&alphapb.ServerReflectionRequest{MessageRequest: &alphapb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: s}})
		var reply *alphapb.ServerReflectionResponse
		if err == nil {
			reply, err = stream2.Recv()
		}
		received := 0
		if err == nil {
			for _, raw := range reply.GetFileDescriptorResponse().GetFileDescriptorProto() {
				fd := &descriptorpb.FileDescriptorProto{}
				if e := proto.Unmarshal(raw, fd); e != nil {
					err = e
					break
				}
				received++
				if !seen[fd.GetName()] {
					seen[fd.GetName()] = true
					files.File = append(files.File, fd)
				}
			}
		}
		emit(statusFields(step{"step": "file_containing " + s, "files": received}, err))
	}
	_ = stream2.CloseSend()
	built, err := protodesc.NewFiles(files)
	emit(statusFields(step{"step": "descriptors_build", "files": len(files.File)}, err))
	if err != nil {
		return
	}
	for _, s := range services {
		if !strings.HasPrefix(s, "larder.") && !strings.HasPrefix(s, "grpc.health.") {
			continue
		}
		entry := step{"step": "service " + s}
		if d, err := built.FindDescriptorByName(protoreflect.FullName(s)); err == nil {
			entry["reflected"] = methodsOf(d.(protoreflect.ServiceDescriptor))
		}
		if d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(s)); err == nil {
			entry["generated"] = methodsOf(d.(protoreflect.ServiceDescriptor))
		}
		emit(entry)
	}
	// A message type the server reflects is the one compiled in, field for field.
	for _, name := range []string{"larder.v1.MealRecord", "larder.v1.ListMealRecordsRequest", "larder.v1.CategoryGroup"} {
		entry := step{"step": "message " + name}
		if d, err := built.FindDescriptorByName(protoreflect.FullName(name)); err == nil {
			entry["reflected"] = fieldsOf(d.(protoreflect.MessageDescriptor))
		}
		if d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name)); err == nil {
			entry["generated"] = fieldsOf(d.(protoreflect.MessageDescriptor))
		}
		emit(entry)
	}
}

func fieldsOf(m protoreflect.MessageDescriptor) []string {
	var out []string
	for i := 0; i < m.Fields().Len(); i++ {
		f := m.Fields().Get(i)
		typeName := ""
		if f.Message() != nil {
			typeName = string(f.Message().FullName())
		} else if f.Enum() != nil {
			typeName = string(f.Enum().FullName())
		}
		out = append(out, fmt.Sprintf("%d %s %s %s %s", f.Number(), f.Name(), f.Cardinality(), f.Kind(), typeName))
	}
	return out
}
