package main

import (
	"fmt"
	"net/http"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The gRPC service, written by hand so there is no generated code: scenarios/lib/ticks.proto is
// what clients load, and main_test.go checks these names against it.
const (
	ticksService = "bench.stream.v1.Ticks"
	watchMethod  = "Watch"
)

var ticksServiceDesc = grpc.ServiceDesc{
	ServiceName: ticksService,
	// Any value implements the empty interface: the handler below takes the server itself.
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    watchMethod,
		Handler:       watchHandler,
		ServerStreams: true,
	}},
	Metadata: "ticks.proto",
}

// watchRequest reads the request Struct's interval_ms and duration_ms (numbers) as parameters.
func watchRequest(req *structpb.Struct) (params, error) {
	fields := req.GetFields()
	return parseParams("interval_ms", "duration_ms", func(name string) (string, bool) {
		v, ok := fields[name]
		if !ok {
			return "", false
		}
		if n, isNum := v.GetKind().(*structpb.Value_NumberValue); isNum {
			return strconv.FormatFloat(n.NumberValue, 'f', -1, 64), true
		}
		return fmt.Sprintf("%v", v.AsInterface()), true
	})
}

// watchHandler is Ticks/Watch: one Int64Value (the slot) per tick; the stream ends with OK when the
// duration is over and with Unavailable when the server stops.
func watchHandler(srv any, stream grpc.ServerStream) error {
	s := srv.(*server)
	req := new(structpb.Struct)
	if err := stream.RecvMsg(req); err != nil {
		return err
	}
	p, err := watchRequest(req)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	r := &http.Request{RemoteAddr: "?"}
	if pr, ok := peer.FromContext(stream.Context()); ok {
		r.RemoteAddr = pr.Addr.String()
	}
	if !s.begin("grpc", r, p) {
		return status.Error(codes.Unavailable, "stopping: no new streams")
	}
	reason, sent, err := s.tick(stream.Context(), p, func(slot, _ int64) error {
		return stream.SendMsg(wrapperspb.Int64(slot))
	})
	s.finish("grpc", r, reason, sent, err)
	if reason == endDrain {
		return status.Error(codes.Unavailable, "server stopping")
	}
	return err
}
