"""grpclib (an independent pure-Python HTTP/2 and gRPC stack) against larder-server."""
from __future__ import annotations

import asyncio
import uuid
from typing import Any, Optional

from grpclib.client import Channel, UnaryUnaryMethod
from grpclib.const import Status
from grpclib.exceptions import GRPCError

from interop_support import Stubs, lean_call
from server_process import RunningServer

TIMEOUT = 60.0


def channel_for(server: RunningServer) -> Channel:
    return Channel(server.host, server.port)


async def unary(channel: Channel, path: str, request: Any, reply_type: type, *,
                metadata: Optional[dict[str, Any]] = None, timeout: float = TIMEOUT) -> Any:
    method = UnaryUnaryMethod(channel, path, type(request), reply_type)
    return await method(request, timeout=timeout, metadata=metadata)


def call_error(server: RunningServer, path: str, request: Any, reply_type: type) -> GRPCError:
    """The GRPCError of a unary call that must fail (on a channel of its own)."""
    async def run() -> GRPCError:
        channel = channel_for(server)
        try:
            await unary(channel, path, request, reply_type)
        except GRPCError as error:
            return error
        finally:
            channel.close()
        raise AssertionError(f"{path} succeeded")

    return asyncio.run(run())


def test_create_get_and_list_locations(stubs: Stubs, shared_server: RunningServer) -> None:
    pb = stubs.location_pb2

    async def run() -> None:
        channel = channel_for(shared_server)
        try:
            name = f"Attic {uuid.uuid4().hex[:12]}"
            created = await unary(channel, "/larder.v1.LocationService/CreateLocation",
                                  pb.CreateLocationRequest(location=pb.Location(name=name, color_hex="#123456")), pb.Location)
            assert created.name == name and len(created.id) == 36
            got = await unary(channel, "/larder.v1.LocationService/GetLocation", pb.GetLocationRequest(id=created.id),
                              pb.Location, metadata={"x-request-id": "grpclib-1", "x-blob-bin": b"\x00\xff"})
            assert got == created
            # Concurrent calls on one HTTP/2 connection.
            listed = await asyncio.gather(*[unary(channel, "/larder.v1.LocationService/ListLocations",
                                                  pb.ListLocationsRequest(), pb.ListLocationsResponse)
                                            for _ in range(50)])
            assert all(created.id in [location.id for location in reply.locations] for reply in listed)
        finally:
            channel.close()

    asyncio.run(run())


def test_errors_carry_the_lean_protocols_status_and_message(stubs: Stubs, shared_server: RunningServer) -> None:
    pb = stubs.location_pb2
    request = pb.GetLocationRequest(id=str(uuid.uuid4()))

    error = call_error(shared_server, "/larder.v1.LocationService/GetLocation", request, pb.Location)
    assert error.status == Status.NOT_FOUND
    assert (error.status.value, error.message) == lean_call(shared_server.address,
                                                            "/larder.v1.LocationService/GetLocation",
                                                            request.SerializeToString())


def test_unknown_method_is_unimplemented(stubs: Stubs, shared_server: RunningServer) -> None:
    pb = stubs.location_pb2

    error = call_error(shared_server, "/larder.v1.LocationService/Teleport", pb.GetLocationRequest(), pb.Location)
    assert error.status == Status.UNIMPLEMENTED and error.message
