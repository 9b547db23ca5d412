"""The transport and client against the in-process fake server (no Swift needed)."""
from __future__ import annotations

import asyncio
import itertools
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from fake_server import FakeServer, reply
from larder_client import AsyncLarderClient, Connection, LarderClient, LarderError, StatusCode
from larder_client.messages import GetLocationRequest, ListMealRecordsRequest, ListMealRecordsResponse, Location, MealRecord


@pytest.fixture
def fake():
    server = FakeServer()
    yield server
    server.stop()


@pytest.fixture
def conn(fake):
    connection = Connection("127.0.0.1", fake.port)
    yield connection
    connection.close()


def test_round_trip_sends_the_envelope_fields(fake, conn):
    assert conn.call("/test/Echo", b"hello", timeout=150.5, metadata={"X-Trace": "abc"}) == b"hello"
    assert conn.call("/test/Echo", b"") == b""
    first, second = fake.requests
    assert first.method == "/test/Echo"
    assert first.payload == b"hello"
    assert first.timeout_ms == 150500
    assert dict(first.metadata) == {"x-trace": "abc"}  # keys go out lower case
    assert second.timeout_ms == 0
    assert first.call_id != 0 and second.call_id != 0 and first.call_id != second.call_id


@pytest.mark.parametrize("timeout, expected_ms", [(0.0001, 1), (0.0015, 2), (2, 2000), (10**8, 0xFFFFFFFF)])
def test_timeout_ms_is_rounded_up_and_clamped(fake, conn, timeout, expected_ms):
    future = conn.call_future("/test/Echo", b"x", timeout=timeout)
    assert future.result(10) == b"x"
    assert fake.requests[-1].timeout_ms == expected_ms


def test_replies_out_of_order_are_matched_by_call_id(fake, conn):
    slow = conn.call_future("/test/Wait", b"k1")
    fast = conn.call_future("/test/Echo", b"fast")
    assert fast.result(10) == b"fast"
    assert not slow.done()  # it waits for the release below, behind a reply already delivered
    assert conn.call("/test/Release", b"k1", timeout=10) == b"k1"
    assert slow.result(10) == b"k1"


def test_many_threads_share_one_connection(fake, conn):
    def worker(n: int) -> list:
        return [conn.call("/test/Echo", f"{n}-{i}".encode(), timeout=10) for i in range(25)]

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(worker, range(40)))
    assert results == [[f"{n}-{i}".encode() for i in range(25)] for n in range(40)]
    ids = [r.call_id for r in fake.requests]
    assert len(ids) == 1000 and len(set(ids)) == 1000


def test_client_side_deadline_when_the_server_never_answers(fake, conn):
    with pytest.raises(LarderError) as info:
        conn.call("/test/Never", b"", timeout=0.05)
    assert info.value.code == StatusCode.DEADLINE_EXCEEDED
    assert "/test/Never" in info.value.message
    assert fake.requests[-1].timeout_ms == 50
    assert conn.call("/test/Echo", b"still usable", timeout=10) == b"still usable"


def test_a_late_reply_to_a_timed_out_call_is_dropped(fake, conn):
    with pytest.raises(LarderError) as info:
        conn.call("/test/Wait", b"late", timeout=0.05)
    assert info.value.code == StatusCode.DEADLINE_EXCEEDED
    fake.release(b"late")  # the server now answers the abandoned call
    assert [conn.call("/test/Echo", bytes([i]), timeout=10) for i in range(5)] == [bytes([i]) for i in range(5)]


@pytest.mark.parametrize("code", [c for c in StatusCode if c != StatusCode.OK])
def test_error_replies_raise_larder_error_with_the_code(conn, code):
    with pytest.raises(LarderError) as info:
        conn.call("/test/Status", str(int(code)).encode(), timeout=10)
    assert info.value.code is code
    assert info.value.message == f"status {int(code)}"
    assert str(info.value) == f"{code.name}: status {int(code)}"


def test_an_unknown_status_number_is_unknown_but_kept(conn):
    with pytest.raises(LarderError) as info:
        conn.call("/test/Status", b"99", timeout=10)
    assert info.value.code is StatusCode.UNKNOWN
    assert info.value.raw_code == 99
    assert str(info.value).startswith("CODE_99:")


def test_call_id_zero_fails_every_pending_call(fake, conn):
    pending = [conn.call_future("/test/Wait", b"never-released") for _ in range(5)]
    with pytest.raises(LarderError) as info:
        conn.call("/test/Kill", b"8", timeout=10)
    assert info.value.code == StatusCode.RESOURCE_EXHAUSTED
    assert info.value.message == "killed by test"
    for future in pending:
        error = future.exception(10)
        assert isinstance(error, LarderError) and error.code == StatusCode.RESOURCE_EXHAUSTED
    with pytest.raises(LarderError) as after:
        conn.call("/test/Echo", b"", timeout=10)
    assert after.value.code == StatusCode.UNAVAILABLE
    assert "closed" in after.value.message and "RESOURCE_EXHAUSTED" in after.value.message


def test_eof_fails_pending_calls_with_unavailable(fake, conn):
    pending = conn.call_future("/test/Wait", b"never")
    with pytest.raises(LarderError) as info:
        conn.call("/test/Close", b"", timeout=10)
    assert info.value.code == StatusCode.UNAVAILABLE
    assert pending.exception(10).code == StatusCode.UNAVAILABLE
    with pytest.raises(LarderError) as after:
        conn.call("/test/Echo", b"", timeout=10)
    assert after.value.code == StatusCode.UNAVAILABLE


def test_a_reply_frame_over_the_limit_closes_the_connection(fake):
    conn = Connection("127.0.0.1", fake.port, max_frame_bytes=1024)
    try:
        with pytest.raises(LarderError) as info:
            conn.call("/test/Huge", b"1025", timeout=10)
        assert info.value.code == StatusCode.RESOURCE_EXHAUSTED
        assert "1025" in info.value.message
    finally:
        conn.close()


def test_close_fails_pending_calls_and_later_calls(fake):
    conn = Connection("127.0.0.1", fake.port)
    pending = conn.call_future("/test/Wait", b"never")
    conn.close()
    assert pending.exception(10).code == StatusCode.UNAVAILABLE
    with pytest.raises(LarderError) as info:
        conn.call("/test/Echo", b"")
    assert info.value.code == StatusCode.UNAVAILABLE


def test_connecting_to_a_closed_port_is_unavailable():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
    with pytest.raises(LarderError) as info:
        Connection("127.0.0.1", port, connect_timeout=5)
    assert info.value.code == StatusCode.UNAVAILABLE
    assert f"127.0.0.1:{port}" in info.value.message


# --- the typed client over the fake -----------------------------------------------------------

def _location_handler(request):
    ask = GetLocationRequest.FromString(request.payload)
    if ask.id != "abc":
        return reply(request, code=5, message=f"location {ask.id!r} not found")
    return reply(request, Location(id="abc", name="客廳", color_hex="#FF5733").SerializeToString())


def test_typed_methods_accept_fields_dicts_and_messages(fake):
    fake.handlers["/larder.v1.LocationService/GetLocation"] = _location_handler
    with LarderClient(fake.address, timeout=10) as client:
        by_fields = client.location_service.get_location(id="abc")
        by_dict = client.get_location({"id": "abc"})
        by_message = client.get_location(GetLocationRequest(id="abc"))
        generic = client.call("/larder.v1.LocationService/GetLocation", GetLocationRequest(id="abc"))
        raw = client.call("/larder.v1.LocationService/GetLocation", GetLocationRequest(id="abc").SerializeToString())
        assert isinstance(by_fields, Location) and by_fields.name == "客廳"
        assert by_fields == by_dict == by_message == generic == raw
        with pytest.raises(LarderError) as info:
            client.get_location(id="zzz")
        assert info.value.code == StatusCode.NOT_FOUND and "zzz" in info.value.message
        with pytest.raises(TypeError):
            client.get_location(Location(id="abc"))
        with pytest.raises(TypeError):
            client.get_location(GetLocationRequest(id="abc"), id="abc")
        with pytest.raises(TypeError):
            client.get_location(no_such_field=1)  # a keyword the method does not have
        with pytest.raises(ValueError, match="no_such_field"):
            client.get_location({"no_such_field": 1})


def test_unknown_methods_return_raw_bytes_through_call(fake):
    with LarderClient(fake.address, timeout=10) as client:
        assert client.call("/test/Echo", b"\x01\x02") == b"\x01\x02"
        with pytest.raises(LarderError) as info:
            client.call("/larder.v1.LocationService/Teleport", b"")
        assert info.value.code == StatusCode.UNIMPLEMENTED


def test_token_and_metadata(fake, monkeypatch):
    monkeypatch.setenv("LARDER_TOKEN", "from-env")
    with LarderClient(fake.address, timeout=10, metadata={"X-App": "tests"}) as client:
        client.call("/test/Echo", b"", metadata={"X-Call": "1"})
    with LarderClient(fake.address, timeout=10, token="explicit") as client:
        client.call("/test/Echo", b"")
    monkeypatch.delenv("LARDER_TOKEN")
    with LarderClient(fake.address, timeout=10) as client:
        client.call("/test/Echo", b"")
    first, second, third = (dict(r.metadata) for r in fake.requests)
    assert first == {"authorization": "Bearer from-env", "x-app": "tests", "x-call": "1"}
    assert second == {"authorization": "Bearer explicit"}
    assert third == {}


def test_default_and_per_call_timeouts(fake):
    # Distinct deadlines long enough for a busy machine: each call must succeed.
    with LarderClient(fake.address, timeout=300) as client:
        client.call("/test/Echo", b"")
        client.call("/test/Echo", b"", timeout=250.5)
        client.call("/test/Echo", b"", timeout=None)
    assert [r.timeout_ms for r in fake.requests] == [300000, 250500, 0]


def test_futures_from_typed_methods(fake):
    fake.handlers["/larder.v1.LocationService/GetLocation"] = _location_handler
    with LarderClient(fake.address, timeout=10) as client:
        futures = [client.get_location.future(id="abc" if i % 2 else "nope") for i in range(20)]
        for i, future in enumerate(futures):
            if i % 2:
                assert future.result(10).color_hex == "#FF5733"
            else:
                assert future.exception(10).code == StatusCode.NOT_FOUND


def test_every_rpc_is_a_method_on_its_service_and_on_the_client(fake):
    from larder_client import METHODS
    with LarderClient(fake.address) as client:
        for info in METHODS.values():
            service = getattr(client, {"larder.v1.CategoryGroupService": "category_group_service",
                                       "larder.v1.ItemCategoryService": "item_category_service",
                                       "larder.v1.LocationService": "location_service",
                                       "larder.v1.MealRecordService": "meal_record_service",
                                       "grpc.health.v1.Health": "health",
                                       "larder.reflection.v1.ServerReflection": "server_reflection",
                                       "larder.admin.v1.Admin": "admin"}[info.service])
            for method in (getattr(service, info.python_name), getattr(client, info.python_name)):
                call = method.call()
                assert call.path == info.path
                assert type(call.request) is info.request_type and call.response_type is info.response_type
    # Every unary method of every service in those proto files is there, none twice: counted from
    # the descriptors, so a new RPC in proto/ needs no edit here. Streaming methods (health's
    # Watch) are gRPC-over-HTTP/2 only: the lean protocol this package speaks carries no streams.
    files = {info.request_type.DESCRIPTOR.file for info in METHODS.values()}
    expected = {f"/{service.full_name}/{method.name}"
                for file in files for service in file.services_by_name.values() for method in service.methods
                if not (method.client_streaming or method.server_streaming)}
    assert set(METHODS) == expected and len(METHODS) == len(expected)


def _paging_handler(tokens: dict[str, str]):
    """ListMealRecords whose next_page_token after page_token t is tokens[t] (one meal a page)."""
    def handle(request):
        token = ListMealRecordsRequest.FromString(request.payload).page_token
        page = ListMealRecordsResponse(meal_records=[MealRecord(id=f"meal after {token!r}", name="n")],
                                       next_page_token=tokens[token])
        return reply(request, page.SerializeToString())
    return handle


# A server that always sends the same token, one that cycles, and a huge token sent twice.
_LOOPS = [{"": "again", "again": "again"}, {"": "a", "a": "b", "b": "c", "c": "a"},
          {"": "x" * 100_000, "x" * 100_000: "x" * 100_000}]


@pytest.mark.parametrize("tokens", _LOOPS)
def test_iter_meal_records_stops_at_a_page_token_the_server_sent_before(fake, tokens):
    fake.handlers["/larder.v1.MealRecordService/ListMealRecords"] = _paging_handler(tokens)
    with LarderClient(fake.address, timeout=10) as client:
        seen = []
        with pytest.raises(LarderError) as info:
            seen.extend(itertools.islice(client.iter_meal_records(), 1000))  # bounded without the check
        assert info.value.code == StatusCode.INTERNAL
        assert "list_meal_records: page " in info.value.message
        assert "which an earlier page of this listing had" in info.value.message
        assert len(info.value.message) < 400  # a huge token is cut
        assert len(seen) == len(tokens)  # each page once: the one whose token repeats is the last
        # A listing that ends is followed to its end.
        fake.handlers["/larder.v1.MealRecordService/ListMealRecords"] = _paging_handler({"": "p2", "p2": "p3", "p3": ""})
        assert [m.id for m in client.iter_meal_records()] == ["meal after ''", "meal after 'p2'", "meal after 'p3'"]


def test_async_iter_meal_records_stops_at_a_page_token_the_server_sent_before(fake):
    fake.handlers["/larder.v1.MealRecordService/ListMealRecords"] = _paging_handler(_LOOPS[1])

    async def main():
        async with AsyncLarderClient(fake.address, timeout=10) as client:
            seen = []
            with pytest.raises(LarderError) as info:
                async for meal in client.iter_meal_records():
                    seen.append(meal.id)
                    if len(seen) == 1000:  # bounded without the check
                        break
            assert info.value.code == StatusCode.INTERNAL and "'a'" in info.value.message
            assert len(seen) == 4

    asyncio.run(main())


# --- asyncio -------------------------------------------------------------------------------------

def test_async_client(fake):
    fake.handlers["/larder.v1.LocationService/GetLocation"] = _location_handler

    async def main():
        client = await AsyncLarderClient.connect(fake.address, timeout=10)
        try:
            location = await client.location_service.get_location(id="abc")
            assert location.name == "客廳"
            echoes = await asyncio.gather(*(client.call("/test/Echo", bytes([i])) for i in range(100)))
            assert echoes == [bytes([i]) for i in range(100)]
            slow = asyncio.ensure_future(client.call("/test/Wait", b"a1"))
            assert await client.call("/test/Release", b"a1") == b"a1"
            assert await slow == b"a1"
            with pytest.raises(LarderError) as info:
                await client.call("/test/Never", b"", timeout=0.05)
            assert info.value.code == StatusCode.DEADLINE_EXCEEDED
            with pytest.raises(LarderError) as info:
                await client.get_location(id="zzz")
            assert info.value.code == StatusCode.NOT_FOUND
            pending = asyncio.ensure_future(client.call("/test/Wait", b"never"))
            await asyncio.sleep(0)  # let it send
            with pytest.raises(LarderError) as info:
                await client.call("/test/Kill", b"14")
            assert info.value.code == StatusCode.UNAVAILABLE
            with pytest.raises(LarderError) as info:
                await pending
            assert info.value.code == StatusCode.UNAVAILABLE and info.value.message == "killed by test"
            assert await client.call("/test/Echo", b"again") == b"again"  # on a new connection
            assert client.connects == 2
            assert [r.payload for r in fake.requests if r.method == "/test/Wait"].count(b"never") == 1
        finally:
            await client.close()

    asyncio.run(main())


def test_async_connect_failure_is_unavailable():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

    async def main():
        with pytest.raises(LarderError) as info:
            await AsyncLarderClient.connect(("127.0.0.1", port), connect_timeout=5)
        assert info.value.code == StatusCode.UNAVAILABLE

    asyncio.run(main())


def test_reader_thread_is_gone_after_close(fake):
    before = {t.ident for t in threading.enumerate()}
    conn = Connection("127.0.0.1", fake.port)
    conn.call("/test/Echo", b"", timeout=10)
    conn.close()
    assert not conn._reader.is_alive()
    assert {t.ident for t in threading.enumerate() if t.name == "larder-reader"} <= before
