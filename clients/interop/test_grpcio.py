"""grpcio (gRPC's own Python stack) against larder-server over gRPC on HTTP/2."""
from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from concurrent import futures
from pathlib import Path
from typing import Any, Callable, List

import grpc
import pytest
from google.protobuf import field_mask_pb2, timestamp_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from interop_support import Stubs, lean_call, unique
from server_process import RunningServer

TIMEOUT = 60  # seconds: a bound for calls on a busy machine, never a speed expectation


def code_and_message(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    error: Any = raised.value
    return error.code(), error.details()


def test_every_location_method(stubs: Stubs, channel: grpc.Channel) -> None:
    pb, rpc = stubs.location_pb2, stubs.location_pb2_grpc
    service = rpc.LocationServiceStub(channel)
    name = unique("Pantry")
    created = service.CreateLocation(pb.CreateLocationRequest(location=pb.Location(name=name, color_hex="#aabbcc")),
                                     timeout=TIMEOUT)
    assert created.name == name and created.color_hex == "#AABBCC" and len(created.id) == 36
    assert created.create_time.seconds > 0
    assert service.GetLocation(pb.GetLocationRequest(id=created.id), timeout=TIMEOUT) == created
    listed = service.ListLocations(pb.ListLocationsRequest(), timeout=TIMEOUT)
    assert created.id in [location.id for location in listed.locations]
    renamed = service.UpdateLocation(pb.UpdateLocationRequest(
        location=pb.Location(id=created.id, name=name + " 2"), update_mask=field_mask_pb2.FieldMask(paths=["name"])),
        timeout=TIMEOUT)
    assert renamed.name == name + " 2" and renamed.color_hex == "#AABBCC"
    service.DeleteLocation(pb.DeleteLocationRequest(id=created.id), timeout=TIMEOUT)
    code, _ = code_and_message(lambda: service.GetLocation(pb.GetLocationRequest(id=created.id), timeout=TIMEOUT))
    assert code == grpc.StatusCode.NOT_FOUND


def test_every_category_group_and_item_category_method(stubs: Stubs, channel: grpc.Channel) -> None:
    gpb, ipb = stubs.category_group_pb2, stubs.item_category_pb2
    groups = stubs.category_group_pb2_grpc.CategoryGroupServiceStub(channel)
    items = stubs.item_category_pb2_grpc.ItemCategoryServiceStub(channel)
    group = groups.CreateCategoryGroup(gpb.CreateCategoryGroupRequest(
        category_group=gpb.CategoryGroup(name=unique("Baking"), color_hex="#112233")), timeout=TIMEOUT)
    item = items.CreateItemCategory(ipb.CreateItemCategoryRequest(
        item_category=ipb.ItemCategory(name=unique("Flour"), icon_name="bag", category_group_id=group.id)),
        timeout=TIMEOUT)
    assert item.category_group_id == group.id
    assert items.GetItemCategory(ipb.GetItemCategoryRequest(id=item.id), timeout=TIMEOUT) == item
    listed = items.ListItemCategories(ipb.ListItemCategoriesRequest(category_group_id=group.id), timeout=TIMEOUT)
    assert [i.id for i in listed.item_categories] == [item.id]
    with_items = groups.GetCategoryGroup(gpb.GetCategoryGroupRequest(id=group.id, include_item_categories=True),
                                         timeout=TIMEOUT)
    assert [i.id for i in with_items.item_categories] == [item.id]
    assert group.id in [g.id for g in groups.ListCategoryGroups(gpb.ListCategoryGroupsRequest(),
                                                                timeout=TIMEOUT).category_groups]
    renamed = items.UpdateItemCategory(ipb.UpdateItemCategoryRequest(
        item_category=ipb.ItemCategory(id=item.id, icon_name="jar"),
        update_mask=field_mask_pb2.FieldMask(paths=["icon_name"])), timeout=TIMEOUT)
    assert renamed.icon_name == "jar" and renamed.name == item.name
    recoloured = groups.UpdateCategoryGroup(gpb.UpdateCategoryGroupRequest(
        category_group=gpb.CategoryGroup(id=group.id, color_hex="#445566"),
        update_mask=field_mask_pb2.FieldMask(paths=["color_hex"])), timeout=TIMEOUT)
    assert recoloured.color_hex == "#445566"
    # A group with categories is not deleted without cascade.
    code, _ = code_and_message(lambda: groups.DeleteCategoryGroup(gpb.DeleteCategoryGroupRequest(id=group.id),
                                                                  timeout=TIMEOUT))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    items.DeleteItemCategory(ipb.DeleteItemCategoryRequest(id=item.id), timeout=TIMEOUT)
    groups.DeleteCategoryGroup(gpb.DeleteCategoryGroupRequest(id=group.id), timeout=TIMEOUT)
    code, _ = code_and_message(lambda: groups.GetCategoryGroup(gpb.GetCategoryGroupRequest(id=group.id),
                                                               timeout=TIMEOUT))
    assert code == grpc.StatusCode.NOT_FOUND


def test_every_meal_record_method(stubs: Stubs, start_server: Callable[..., RunningServer]) -> None:
    pb = stubs.meal_record_pb2
    common = stubs.common_pb2
    server = start_server()  # its own database: the summary counts every meal in it
    with grpc.insecure_channel(server.address) as channel:
        meals = stubs.meal_record_pb2_grpc.MealRecordServiceStub(channel)
        day = 1_767_225_600  # 2026-01-01T00:00:00Z
        made = []
        for i, category in enumerate([common.MEAL_CATEGORY_BREAKFAST, common.MEAL_CATEGORY_LUNCH, common.MEAL_CATEGORY_DINNER]):
            made.append(meals.CreateMealRecord(pb.CreateMealRecordRequest(meal_record=pb.MealRecord(
                name=f"meal {i}", calories=100 * (i + 1), category=category,
                eaten_at=timestamp_pb2.Timestamp(seconds=day + 3600 * (8 + 4 * i), nanos=123_456_789))),
                timeout=TIMEOUT))
        assert made[0].eaten_at.nanos == 123_456_789
        assert meals.GetMealRecord(pb.GetMealRecordRequest(id=made[1].id), timeout=TIMEOUT) == made[1]
        first = meals.ListMealRecords(pb.ListMealRecordsRequest(page_size=2), timeout=TIMEOUT)
        assert [m.id for m in first.meal_records] == [made[2].id, made[1].id] and first.next_page_token
        rest = meals.ListMealRecords(pb.ListMealRecordsRequest(page_size=2, page_token=first.next_page_token),
                                     timeout=TIMEOUT)
        assert [m.id for m in rest.meal_records] == [made[0].id] and not rest.next_page_token
        updated = meals.UpdateMealRecord(pb.UpdateMealRecordRequest(
            meal_record=pb.MealRecord(id=made[0].id, calories=450),
            update_mask=field_mask_pb2.FieldMask(paths=["calories"])), timeout=TIMEOUT)
        assert updated.calories == 450 and updated.name == "meal 0"
        summary = meals.SummarizeMealRecords(pb.SummarizeMealRecordsRequest(
            start_time=timestamp_pb2.Timestamp(seconds=day), end_time=timestamp_pb2.Timestamp(seconds=day + 86400)),
            timeout=TIMEOUT)
        assert summary.meal_count == 3 and summary.total_calories == 450 + 200 + 300
        assert [d.date for d in summary.days] == ["2026-01-01"]
        meals.DeleteMealRecord(pb.DeleteMealRecordRequest(id=made[0].id), timeout=TIMEOUT)
        code, _ = code_and_message(lambda: meals.GetMealRecord(pb.GetMealRecordRequest(id=made[0].id),
                                                               timeout=TIMEOUT))
        assert code == grpc.StatusCode.NOT_FOUND


def test_admin_and_larder_reflection(stubs: Stubs, channel: grpc.Channel) -> None:
    admin = stubs.admin_pb2_grpc.AdminStub(channel)
    info = admin.GetServerInfo(stubs.admin_pb2.GetServerInfoRequest(), timeout=TIMEOUT)
    assert info.version and info.protocol_version
    metrics = admin.GetMetrics(stubs.admin_pb2.GetMetricsRequest(), timeout=TIMEOUT)
    assert metrics.connections_open >= 1 and metrics.methods
    reflection = stubs.reflection_pb2_grpc.ServerReflectionStub(channel)
    services = reflection.ListServices(stubs.reflection_pb2.ListServicesRequest(), timeout=TIMEOUT)
    names = {s.name for s in services.services}
    assert {"larder.v1.LocationService", "larder.v1.MealRecordService", "grpc.health.v1.Health"} <= names


def test_health_check_with_the_grpc_health_checking_stubs(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    assert health.Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT).status == \
        health_pb2.HealthCheckResponse.SERVING
    assert health.Check(health_pb2.HealthCheckRequest(service="larder.v1.LocationService"),
                        timeout=TIMEOUT).status == health_pb2.HealthCheckResponse.SERVING
    code, _ = code_and_message(lambda: health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"),
                                                    timeout=TIMEOUT))
    assert code == grpc.StatusCode.NOT_FOUND


def test_error_statuses_and_messages_are_the_lean_protocols(stubs: Stubs, shared_server: RunningServer,
                                                            channel: grpc.Channel) -> None:
    lpb, mpb, gpb = stubs.location_pb2, stubs.meal_record_pb2, stubs.category_group_pb2
    taken = unique("Taken")
    stubs.location_pb2_grpc.LocationServiceStub(channel).CreateLocation(
        lpb.CreateLocationRequest(location=lpb.Location(name=taken, color_hex="#123456")), timeout=TIMEOUT)
    cases = [
        ("/larder.v1.LocationService/CreateLocation", lpb.CreateLocationRequest(location=lpb.Location(name="  ")),
         grpc.StatusCode.INVALID_ARGUMENT),
        ("/larder.v1.LocationService/CreateLocation", lpb.CreateLocationRequest(location=lpb.Location(name=taken, color_hex="#123456")),
         grpc.StatusCode.ALREADY_EXISTS),
        ("/larder.v1.LocationService/GetLocation", lpb.GetLocationRequest(id=str(uuid.uuid4())),
         grpc.StatusCode.NOT_FOUND),
        ("/larder.v1.LocationService/GetLocation", lpb.GetLocationRequest(id="not-a-uuid"),
         grpc.StatusCode.INVALID_ARGUMENT),
        ("/larder.v1.MealRecordService/CreateMealRecord", mpb.CreateMealRecordRequest(
            meal_record=mpb.MealRecord(name="x", calories=-5)), grpc.StatusCode.INVALID_ARGUMENT),
        ("/larder.v1.MealRecordService/ListMealRecords", mpb.ListMealRecordsRequest(page_token="garbage"),
         grpc.StatusCode.INVALID_ARGUMENT),
        ("/larder.v1.CategoryGroupService/UpdateCategoryGroup", gpb.UpdateCategoryGroupRequest(
            category_group=gpb.CategoryGroup(id=str(uuid.uuid4()), name="x"),
            update_mask=field_mask_pb2.FieldMask(paths=["no_such_field"])), grpc.StatusCode.INVALID_ARGUMENT),
        ("/larder.v1.LocationService/NoSuchMethod", lpb.GetLocationRequest(), grpc.StatusCode.UNIMPLEMENTED),
        ("/no.such.Service/Method", lpb.GetLocationRequest(), grpc.StatusCode.UNIMPLEMENTED),
    ]
    for path, request, expected in cases:
        payload = request.SerializeToString()
        call = channel.unary_unary(path, request_serializer=None, response_deserializer=None)
        code, message = code_and_message(lambda: call(payload, timeout=TIMEOUT))
        assert code == expected, (path, message)
        assert message, f"{path}: {code} came without a message"
        assert (code.value[0], message) == lean_call(shared_server.address, path, payload), path


def test_a_message_the_server_cannot_decode_is_invalid_argument(channel: grpc.Channel) -> None:
    call = channel.unary_unary("/larder.v1.LocationService/GetLocation", request_serializer=None,
                               response_deserializer=None)
    code, message = code_and_message(lambda: call(b"\x0a\xff\xff\xff\xff\x0f", timeout=TIMEOUT))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and message


def padded(request: bytes, total: int, filler: bytes = b"\x00") -> bytes:
    """`request` padded to `total` bytes with an unknown length-delimited field 15 of `filler`
    repeated, which the server skips."""
    body = total - len(request) - 1 - 4  # tag byte + 4-byte varint length
    length = bytes([0x80 | (body & 0x7F), 0x80 | ((body >> 7) & 0x7F), 0x80 | ((body >> 14) & 0x7F),
                    (body >> 21) & 0x7F])
    return request + b"\x7a" + length + (filler * (body // len(filler) + 1))[:body]


def test_a_message_near_the_size_limit_is_served_and_one_over_it_refused(stubs: Stubs, channel: grpc.Channel) -> None:
    # (4 MiB - 1 KiB) on the wire is served, 4 MiB + 1 KiB is refused.
    request = stubs.location_pb2.GetLocationRequest(id=str(uuid.uuid4())).SerializeToString()
    call = channel.unary_unary("/larder.v1.LocationService/GetLocation", request_serializer=None,
                               response_deserializer=None)
    near = padded(request, 4 * 1024 * 1024 - 1024)
    assert len(near) == 4 * 1024 * 1024 - 1024
    code, _ = code_and_message(lambda: call(near, timeout=TIMEOUT))
    assert code == grpc.StatusCode.NOT_FOUND  # decoded and looked up
    code, message = code_and_message(lambda: call(padded(request, 4 * 1024 * 1024 + 1024), timeout=TIMEOUT))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and message
    # The channel still works.
    code, _ = code_and_message(lambda: call(request, timeout=TIMEOUT))
    assert code == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("compression", [grpc.Compression.Gzip, grpc.Compression.Deflate], ids=["gzip", "deflate"])
def test_a_channel_that_compresses_its_requests_is_served(stubs: Stubs, shared_server: RunningServer,
                                                         compression: grpc.Compression) -> None:
    pb = stubs.location_pb2
    with grpc.insecure_channel(shared_server.address, compression=compression) as channel:
        service = stubs.location_pb2_grpc.LocationServiceStub(channel)
        created = service.CreateLocation(pb.CreateLocationRequest(location=pb.Location(name=unique("Cellar"), color_hex="#aabbcc")),
                                         timeout=TIMEOUT)
        assert service.GetLocation(pb.GetLocationRequest(id=created.id), timeout=TIMEOUT) == created
        # Random hex digits compress about 2:1, so 4 MiB of them go as ~2.3 MB: the size
        # limit applies to what they inflate to.
        call = channel.unary_unary("/larder.v1.LocationService/GetLocation", request_serializer=None,
                                   response_deserializer=None)
        request = pb.GetLocationRequest(id=created.id).SerializeToString()
        hex_digits = os.urandom(64 * 1024).hex().encode()
        assert call(padded(request, 4 * 1024 * 1024 - 1024, hex_digits), timeout=TIMEOUT) == created.SerializeToString()
        code, message = code_and_message(
            lambda: call(padded(request, 4 * 1024 * 1024 + 1024, hex_digits), timeout=TIMEOUT))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "inflates to more than the limit of 4194304 bytes" in message
        # 4 MiB of zeros compress to 4 KiB: a fresh connection may not inflate that much (a gzip
        # bomb's ratio); the connection is still served.
        with grpc.insecure_channel(shared_server.address, compression=compression,
                                   options=[("grpc.use_local_subchannel_pool", 1)]) as fresh:  # a new connection
            bomb = fresh.unary_unary("/larder.v1.LocationService/GetLocation", request_serializer=None,
                                     response_deserializer=None)
            code, message = code_and_message(lambda: bomb(padded(request, 4 * 1024 * 1024 - 1024), timeout=TIMEOUT))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "inflate to more than 32 times the bytes it sent" in message
            assert bomb(request, timeout=TIMEOUT) == created.SerializeToString()
        code, message = code_and_message(lambda: service.CreateLocation(
            pb.CreateLocationRequest(location=pb.Location(name="")), timeout=TIMEOUT))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and message  # decoded after inflating, checked as ever
        service.DeleteLocation(pb.DeleteLocationRequest(id=created.id), timeout=TIMEOUT)


@pytest.mark.parametrize("compression", [grpc.Compression.Gzip, grpc.Compression.Deflate], ids=["gzip", "deflate"])
def test_replies_of_a_kib_or_more_come_back_compressed_and_grpcio_reads_them(
        stubs: Stubs, shared_server: RunningServer, channel: grpc.Channel, compression: grpc.Compression) -> None:
    pb = stubs.location_pb2
    plain = stubs.location_pb2_grpc.LocationServiceStub(channel)
    admin = stubs.admin_pb2_grpc.AdminStub(channel)
    made = [plain.CreateLocation(pb.CreateLocationRequest(location=pb.Location(
        name=unique("Shelf") + " of the long pantry wall" * 3, color_hex="#aabbcc")), timeout=TIMEOUT) for _ in range(12)]

    def bytes_sent() -> int:
        return int(admin.GetMetrics(stubs.admin_pb2.GetMetricsRequest(), timeout=TIMEOUT).bytes_sent)

    with grpc.insecure_channel(shared_server.address, compression=compression) as compressing:
        compressed = stubs.location_pb2_grpc.LocationServiceStub(compressing)
        before = bytes_sent()
        listed = compressed.ListLocations(pb.ListLocationsRequest(), timeout=TIMEOUT)
        compressed_cost = bytes_sent() - before
    before = bytes_sent()
    assert plain.ListLocations(pb.ListLocationsRequest(), timeout=TIMEOUT) == listed
    plain_cost = bytes_sent() - before
    assert {m.id for m in made} <= {location.id for location in listed.locations}
    # Each cost includes one GetMetrics reply, the same size give or take a few digits.
    assert listed.ByteSize() > 1024 and compressed_cost < plain_cost - listed.ByteSize() // 2
    for location in made:
        plain.DeleteLocation(pb.DeleteLocationRequest(id=location.id), timeout=TIMEOUT)


def test_metadata_including_binary_values_is_accepted(stubs: Stubs, channel: grpc.Channel) -> None:
    service = stubs.location_pb2_grpc.LocationServiceStub(channel)
    reply = service.ListLocations(stubs.location_pb2.ListLocationsRequest(), timeout=TIMEOUT,
                                  metadata=[("x-request-id", "abc-123"), ("x-trace-bin", b"\x00\x01\xfe\xff")])
    assert reply.locations  # the default data


def test_bearer_token_auth(stubs: Stubs, start_server: Callable[..., RunningServer], tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    server = start_server("--auth-token-file", str(token_file))
    request = stubs.location_pb2.ListLocationsRequest()
    path = "/larder.v1.LocationService/ListLocations"
    with grpc.insecure_channel(server.address) as channel:
        service = stubs.location_pb2_grpc.LocationServiceStub(channel)
        code, message = code_and_message(lambda: service.ListLocations(request, timeout=TIMEOUT))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert (code.value[0], message) == lean_call(server.address, path, request.SerializeToString())
        code, message = code_and_message(lambda: service.ListLocations(
            request, timeout=TIMEOUT, metadata=[("authorization", "Bearer wrong")]))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert (code.value[0], message) == lean_call(server.address, path, request.SerializeToString(), "wrong")
        assert service.ListLocations(request, timeout=TIMEOUT,
                                     metadata=[("authorization", "Bearer s3cret-token")]).locations
        # Health needs no token.
        assert health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT).status == \
            health_pb2.HealthCheckResponse.SERVING


def test_a_thousand_concurrent_calls_on_one_channel(stubs: Stubs, channel: grpc.Channel) -> None:
    pb = stubs.location_pb2
    service = stubs.location_pb2_grpc.LocationServiceStub(channel)
    prefix = unique("Shelf")
    creates = [service.CreateLocation.future(pb.CreateLocationRequest(location=pb.Location(name=f"{prefix} {i}", color_hex="#123456")),
                                             timeout=TIMEOUT) for i in range(500)]
    created = [f.result() for f in creates]
    gets = [service.GetLocation.future(pb.GetLocationRequest(id=location.id), timeout=TIMEOUT)
            for location in created for _ in range(2)]
    assert [f.result().id for f in gets] == [location.id for location in created for _ in range(2)]
    assert len({location.id for location in created}) == 500


def test_concurrent_big_replies_to_a_client_that_reads_are_all_served(
        stubs: Stubs, start_server: Callable[..., RunningServer]) -> None:
    # 128 pages of ~130 KB in flight on one channel are 17 MB, over the 8 MiB a connection may
    # leave unread: calls that find it full wait for the client to read (before, some got
    # RESOURCE_EXHAUSTED, although grpcio reads as fast as it can).
    pb = stubs.meal_record_pb2
    server = start_server()
    with grpc.insecure_channel(server.address) as channel:
        meals = stubs.meal_record_pb2_grpc.MealRecordServiceStub(channel)
        creates = [meals.CreateMealRecord.future(pb.CreateMealRecordRequest(meal_record=pb.MealRecord(
            name=f"{i:04d} " + "x" * 95, calories=i, category=stubs.common_pb2.MEAL_CATEGORY_SNACK)), timeout=TIMEOUT)
            for i in range(1000)]
        assert len({f.result().id for f in creates}) == 1000
        lists = [meals.ListMealRecords.future(pb.ListMealRecordsRequest(page_size=1000), timeout=TIMEOUT)
                 for _ in range(128)]
        failures = [f.exception(timeout=TIMEOUT) for f in lists]
        assert failures == [None] * 128, [failure for failure in failures if failure is not None][:1]
        assert all(len(f.result().meal_records) == 1000 for f in lists)


def test_a_cancelled_call_leaves_the_channel_and_server_serving(stubs: Stubs, shared_server: RunningServer,
                                                                channel: grpc.Channel) -> None:
    pb = stubs.meal_record_pb2
    meals = stubs.meal_record_pb2_grpc.MealRecordServiceStub(channel)
    cancelled = [meals.ListMealRecords.future(pb.ListMealRecordsRequest(page_size=100), timeout=TIMEOUT)
                 for _ in range(50)]
    for future in cancelled:
        future.cancel()
    for future in cancelled:
        try:
            future.result()
        except grpc.FutureCancelledError:
            pass
    assert any(f.cancelled() for f in cancelled)
    results = [meals.ListMealRecords.future(pb.ListMealRecordsRequest(page_size=1), timeout=TIMEOUT)
               for _ in range(100)]
    for future in results:
        future.result()
    assert shared_server.process.poll() is None


def test_the_channel_reconnects_after_a_server_restart(stubs: Stubs,
                                                       start_server: Callable[..., RunningServer]) -> None:
    pb = stubs.location_pb2
    first = start_server()
    with grpc.insecure_channel(first.address) as channel:
        service = stubs.location_pb2_grpc.LocationServiceStub(channel)
        created = service.CreateLocation(pb.CreateLocationRequest(location=pb.Location(name=unique("Cellar"), color_hex="#123456")),
                                         timeout=TIMEOUT)
        first.signal(signal.SIGTERM)
        assert first.wait(60) == 0
        second = start_server(db=first.db, port=first.port)
        assert second.port == first.port
        again = service.GetLocation(pb.GetLocationRequest(id=created.id), timeout=TIMEOUT, wait_for_ready=True)
        assert again == created


def test_sigterm_drains_calls_in_flight_and_keeps_every_acknowledged_write(
        stubs: Stubs, start_server: Callable[..., RunningServer]) -> None:
    pb = stubs.location_pb2
    server = start_server("--drain-timeout", "60")
    acknowledged: List[str] = []
    refused: List[grpc.StatusCode] = []
    with grpc.insecure_channel(server.address) as channel:
        service = stubs.location_pb2_grpc.LocationServiceStub(channel)
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
        prefix = unique("Drain")
        stop = threading.Event()

        def writer(worker: int) -> None:
            for i in range(2000):
                if stop.is_set():
                    return
                try:
                    made = service.CreateLocation(pb.CreateLocationRequest(
                        location=pb.Location(name=f"{prefix} {worker}-{i}", color_hex="#123456")), timeout=TIMEOUT)
                    acknowledged.append(made.id)
                except grpc.RpcError as error:
                    refused.append(error.code())
                    return

        with futures.ThreadPoolExecutor(8) as pool:
            workers = [pool.submit(writer, w) for w in range(8)]
            deadline = time.monotonic() + TIMEOUT
            while len(acknowledged) < 50 and time.monotonic() < deadline:
                time.sleep(0.01)
            server.signal(signal.SIGTERM)
            assert server.wait(90) == 0
            stop.set()
            for worker in workers:
                worker.result()
    assert len(acknowledged) >= 50
    # After the drain began, calls were refused as UNAVAILABLE (or never reached a server).
    assert set(refused) <= {grpc.StatusCode.UNAVAILABLE}
    restarted = start_server(db=server.db)
    with grpc.insecure_channel(restarted.address) as channel:
        service = stubs.location_pb2_grpc.LocationServiceStub(channel)
        stored = {location.id for location in service.ListLocations(pb.ListLocationsRequest(),
                                                                    timeout=TIMEOUT).locations}
    assert set(acknowledged) <= stored, "an acknowledged create was lost"
