"""grpcio against the streaming standard services: server reflection (v1alpha through
grpcio-reflection's own client, v1 on the wire) and health Watch."""
from __future__ import annotations

import queue
import signal
import threading
import time
from typing import Any, Callable, Iterator

import grpc
from google.protobuf import descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from server_process import RunningServer

TIMEOUT = 60


def test_reflection_lists_describes_and_invokes_with_no_proto_files(channel: grpc.Channel) -> None:
    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {"larder.v1.LocationService", "larder.v1.MealRecordService", "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} <= services
    pool = descriptor_pool.DescriptorPool(database)
    service = pool.FindServiceByName("larder.v1.LocationService")
    assert {m.name for m in service.methods} >= {"CreateLocation", "GetLocation", "ListLocations"}
    method = service.FindMethodByName("ListLocations")
    request_class = message_factory.GetMessageClass(method.input_type)
    response_class = message_factory.GetMessageClass(method.output_type)
    assert [f.name for f in pool.FindMessageTypeByName("larder.v1.Location").fields][:3] == ["id", "name", "color_hex"]
    call = channel.unary_unary("/larder.v1.LocationService/ListLocations",
                               request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=response_class.FromString)
    reply: Any = call(request_class(), timeout=TIMEOUT)
    assert len(reply.locations) >= 1 and reply.locations[0].name


def _reflection_exchange(channel: grpc.Channel, path: str,
                         requests: list[reflection_pb2.ServerReflectionRequest]) -> list[reflection_pb2.ServerReflectionResponse]:
    call = channel.stream_stream(path, request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                                 response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
    return list(call(iter(requests), timeout=TIMEOUT))


def test_reflection_v1_answers_the_same_as_v1alpha(channel: grpc.Channel) -> None:
    # grpc.reflection.v1 has the same messages on the wire as v1alpha.
    requests = [reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol="larder.v1.MealRecordService"),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol="no.such.Symbol")]
    v1 = _reflection_exchange(channel, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", requests)
    alpha = _reflection_exchange(channel, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", requests)
    assert v1 == alpha and len(v1) == 3
    assert "larder.v1.MealRecordService" in {s.name for s in v1[0].list_services_response.service}
    assert v1[1].file_descriptor_response.file_descriptor_proto
    assert v1[2].error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


def test_health_watch_streams_serving_then_not_serving_on_drain(start_server: Callable[..., RunningServer]) -> None:
    server = start_server("--drain-timeout", "30")
    statuses: "queue.Queue[Any]" = queue.Queue()
    with grpc.insecure_channel(server.address) as channel:
        stream: Iterator[Any] = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(),
                                                                           timeout=TIMEOUT)

        def read() -> None:
            try:
                for response in stream:
                    statuses.put(response.status)
            except grpc.RpcError as error:
                statuses.put(error.code())
            statuses.put(None)

        threading.Thread(target=read, daemon=True).start()
        assert statuses.get(timeout=TIMEOUT) == health_pb2.HealthCheckResponse.SERVING
        server.signal(signal.SIGTERM)
        assert statuses.get(timeout=TIMEOUT) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert server.wait(60) == 0


def test_open_streams_count_against_the_connections_memory_share(start_server: Callable[..., RunningServer]) -> None:
    """Each open Watch stream's head (here 7 KB of metadata) stays with its call until the stream
    ends, and counts in the server's memory budget: once the connection holds more than its
    share of an exhausted budget, its new calls are RESOURCE_EXHAUSTED, the open streams keep
    streaming, and once they end the connection takes calls again. (Before, 1,000 such streams
    per connection held ~8.8 KiB each outside every limit.)"""
    server = start_server("--memory-budget-bytes", str(1 << 20))
    metadata = [("x-padding", "p" * 7000)]
    with grpc.insecure_channel(server.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        streams: list[Any] = []
        refused: grpc.RpcError | None = None
        for _ in range(200):
            # 600 s, not TIMEOUT: the ~130 are opened one after another, and one that expired
            # while a busy machine opened the rest would give back its part of the budget.
            stream = stub.Watch(health_pb2.HealthCheckRequest(), timeout=600, metadata=metadata)
            try:
                assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
            except grpc.RpcError as error:
                refused = error
                break
            streams.append(stream)
        assert refused is not None, "200 streams of 7 KB heads fit in a 1 MiB budget"
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused
        assert "bytes of open calls' headers" in (refused.details() or ""), refused.details()
        assert 100 <= len(streams) < 160, len(streams)  # 1 MiB / (7 KB + 1 KiB) is about 128
        for stream in streams:
            stream.cancel()

        def serving() -> bool:
            try:
                return bool(stub.Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT).status ==
                            health_pb2.HealthCheckResponse.SERVING)
            except grpc.RpcError:
                return False

        deadline = time.monotonic() + TIMEOUT
        while not serving():
            assert time.monotonic() < deadline, "the connection never took calls again"
            time.sleep(0.05)
