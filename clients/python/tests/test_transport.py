"""The transport and client against the in-process fake server (no Swift needed)."""
from __future__ import annotations

import asyncio
import itertools
import os
import signal
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from fake_server import FakeServer, RawPeer, read_some, reply
from larder_client import AsyncLarderClient, Connection, LarderClient, LarderError, StatusCode, parse_address
from larder_client._gen.larder.rpc.v1.envelope_pb2 import RequestEnvelope
from larder_client.aio import AsyncConnection
from larder_client.transport import HEADER, encode_request
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
def test_timeout_ms_is_rounded_up_and_clamped(timeout, expected_ms):
    # Encoded, not sent: a call with a 0.1 ms timeout may expire before it is sent on a busy machine.
    frame = encode_request(1, "/test/Echo", b"x", timeout, None)
    assert RequestEnvelope.FromString(frame[HEADER.size:]).timeout_ms == expected_ms


def test_the_timeout_travels_with_the_call(fake, conn):
    future = conn.call_future("/test/Echo", b"x", timeout=30)
    assert future.result(30) == b"x"
    assert fake.requests[-1].timeout_ms == 30_000


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


_HOSTILE = ("no\x1b[2J\x1b]0;title\x07 such\r\nFAKE: ok\x00 \u202eevil\u202c \u2066x\u2069 \x9b31m \u0085"
            " 玄關 \U0001F600 a\u200db \\ done")


def _status_with(message: str):
    return lambda request: reply(request, code=3, message=message)


def test_str_and_repr_of_an_error_escape_what_could_drive_a_terminal(fake, conn):
    """str(LarderError) passed the server's ESC sequences, CR/LF, NUL, bidirectional overrides
    and C1 controls to whatever printed it (audit 14 L2); `message` keeps them, as received."""
    import pickle
    import traceback

    fake.handlers["/test/Hostile"] = _status_with(_HOSTILE)
    with pytest.raises(LarderError) as info:
        conn.call("/test/Hostile", timeout=10)
    error = info.value
    assert error.code == StatusCode.INVALID_ARGUMENT and error.message == _HOSTILE
    assert str(error) == ("INVALID_ARGUMENT: no\\x1b[2J\\x1b]0;title\\x07 such\\r\\nFAKE: ok\\x00 \\u202eevil\\u202c "
                          "\\u2066x\\u2069 \\x9b31m \\x85 玄關 \U0001F600 a\u200db \\ done")
    printed = "".join(traceback.format_exception(error)) + repr(error) + str(error)
    for char in "\x1b\x07\r\x00\u202e\u202c\u2066\u2069\x9b\x85":
        assert char not in printed, repr(char)
    assert pickle.loads(pickle.dumps(error)).message == _HOSTILE


def test_str_of_an_error_shows_at_most_4_kib_of_its_message(fake, conn):
    fake.handlers["/test/Long"] = _status_with("é" * 1_000_000 + "x" * 1_000_000)
    with pytest.raises(LarderError) as info:
        conn.call("/test/Long", timeout=10)
    error = info.value
    assert len(error.message) == 2_000_000
    shown = str(error)
    assert shown.startswith("INVALID_ARGUMENT: éé") and shown.endswith("é… (3000000 bytes)")
    assert len(shown.encode()) < 4096 + 100 and len(repr(error).encode()) < 4096 + 100
    controls = LarderError(13, "\x01" * 100_000)  # escaped, then cut: 4 KiB of "\x01"s at most
    assert str(controls).endswith("\\x01… (100000 bytes)") and len(str(controls)) < 4096 + 100
    short = LarderError(13, "x" * 4096)
    assert str(short) == "INTERNAL: " + "x" * 4096


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


SENT = "(the request was sent: the server may have applied it)"


def test_eof_fails_pending_calls_with_unavailable(fake, conn):
    pending = conn.call_future("/test/Wait", b"never")
    with pytest.raises(LarderError) as info:
        conn.call("/test/Close", b"", timeout=10)
    assert info.value.code == StatusCode.UNAVAILABLE
    assert pending.exception(10).code == StatusCode.UNAVAILABLE
    # Each call cut off says its request was sent: a write may have been applied (as the Swift
    # client and the CLI say); a status the server sent for the connection says nothing of it.
    assert info.value.message.endswith(SENT) and pending.exception(10).message.endswith(SENT), info.value.message
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


def _answers(data: bytes):
    """A peer that answers the first request with `data` and then keeps the connection open."""
    def script(conn, stopped):
        if read_some(conn, stopped):
            conn.sendall(data)
            stopped.wait(120)
    return script


_SETTINGS = bytes.fromhex("000012 04 00 00000000") + bytes.fromhex("000300000064 000400100000 000600002000")
_NOT_LEAN = {
    "http": (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
             "answered in HTTP/1.x, not in Larder frames (its reply starts \"HTTP\"): is it a Larder server?"),
    "text": (b"SSH-2.0-OpenSSH_9.6\r\n", "answered with text, not in Larder frames (its reply starts \"SSH-\"): "
                                          "is it a Larder server?"),
    "tls alert": (bytes.fromhex("15030100020246"), "answered with TLS (its reply starts like a TLS record), not in "
                                                   "cleartext Larder frames: does the server want TLS (tls="),
    "tls handshake": (bytes.fromhex("160303007a02000076030300"), "does the server want TLS"),
    "h2 settings": (_SETTINGS, "answered in HTTP/2 (its reply starts with an HTTP/2 SETTINGS frame), not in "
                               "Larder frames: it serves gRPC only; use a gRPC client (grpcio) for gRPC servers"),
    "h2 empty settings": (bytes.fromhex("000000 04 00 00000000"), "answered in HTTP/2"),
}


@pytest.mark.parametrize("kind", list(_NOT_LEAN))
def test_a_reply_in_another_protocol_is_unavailable_with_a_hint(kind):
    """HTTP text or a TLS record was read as a length prefix of 1 GiB or more, RESOURCE_EXHAUSTED
    "reply frame of 1213486160 bytes exceeds …"; an HTTP/2 SETTINGS frame as a frame whose rest
    never came, or did not decode (audit 14 L3). The Swift client's hints, on both clients."""
    data, hint = _NOT_LEAN[kind]
    peer = RawPeer(_answers(data))
    try:
        conn = Connection("127.0.0.1", peer.port)
        with pytest.raises(LarderError) as info:
            conn.call("/grpc.health.v1.Health/Check", timeout=10)
        conn.close()

        async def main():
            async with AsyncLarderClient(peer.address, timeout=10) as client:
                with pytest.raises(LarderError) as raised:
                    await client.health.check()
                return raised.value

        async_error = asyncio.run(main())
    finally:
        peer.stop()
    for error in (info.value, async_error):
        assert error.code == StatusCode.UNAVAILABLE, error
        assert f"127.0.0.1:{peer.port} " in error.message and hint in error.message


def test_a_first_reply_cut_short_is_the_end_of_the_connection_not_http2():
    """A first reply whose header may begin a SETTINGS frame, then two zero bytes and the end:
    the connection ended, and the caller is told so, not that the server speaks HTTP/2."""
    def script(conn, stopped):
        if read_some(conn, stopped):
            conn.sendall(bytes.fromhex("00000604 0000"))
            conn.shutdown(socket.SHUT_WR)
    peer = RawPeer(script)
    try:
        conn = Connection("127.0.0.1", peer.port)
        with pytest.raises(LarderError) as info:
            conn.call("/grpc.health.v1.Health/Check", timeout=10)
        conn.close()
    finally:
        peer.stop()
    assert info.value.code == StatusCode.UNAVAILABLE, info.value
    assert "HTTP/2" not in info.value.message and "closed by the server" in info.value.message, info.value


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


def _endless_pages(meals_a_page: int = 0, token_size: int = 0):
    """ListMealRecords that always has a next page, with a token never sent before (page n+1's
    token is "t<n>" padded to token_size characters)."""
    pages = itertools.count(1)

    def handle(request):
        token = f"t{next(pages)}-".ljust(token_size, "z")
        page = ListMealRecordsResponse(meal_records=[MealRecord(id=f"{token[:12]} {i}") for i in range(meals_a_page)],
                                       next_page_token=token)
        return reply(request, page.SerializeToString())
    return handle


def _ends_within(seconds: float, server: FakeServer, action):
    """What `action` returned or raised, run in a thread; fails the test when it is still running
    after `seconds` (then stops `server`, which ends it)."""
    outcome = []

    def run() -> None:
        try:
            outcome.append(action())
        except BaseException as e:
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        server.stop()
        pytest.fail(f"still running after {seconds} s")
    return outcome[0]


def test_iter_meal_records_stops_after_10000_pages_of_fresh_tokens(fake):
    """Empty pages, each with a new token: the iterator fetched pages for ever, and the caller's
    loop body never ran to stop it (audit 14 M1). It stops at 10,000 pages, as the CLI does."""
    fake.handlers["/larder.v1.MealRecordService/ListMealRecords"] = _endless_pages()
    with LarderClient(fake.address, timeout=10) as client:
        error = _ends_within(120, fake, lambda: list(client.iter_meal_records()))
    assert isinstance(error, LarderError), error
    assert error.code == StatusCode.RESOURCE_EXHAUSTED
    assert "list_meal_records: stopped after 10,000 pages" in error.message
    assert "the listing is incomplete" in error.message
    assert len(fake.requests) == 10_000


@pytest.mark.parametrize("token_size", [10, 300_000])  # big tokens: past the 1 MiB of tokens kept
def test_the_page_limit_is_larder_client_rpc_max_pages(fake, monkeypatch, token_size):
    from larder_client import rpc

    monkeypatch.setattr(rpc, "MAX_PAGES", 20)
    fake.handlers["/larder.v1.MealRecordService/ListMealRecords"] = _endless_pages(3, token_size)
    with LarderClient(fake.address, timeout=10) as client:
        seen = []
        with pytest.raises(LarderError) as info:
            seen.extend(itertools.islice(client.iter_meal_records(), 1000))  # bounded without the limit
    assert info.value.code == StatusCode.RESOURCE_EXHAUSTED and "stopped after 20 pages" in info.value.message
    assert len(seen) == 60  # every page's items, then the error
    # A listing that ends within the limit is followed to its end.
    fake.handlers["/larder.v1.MealRecordService/ListMealRecords"] = _paging_handler(
        {"": "p2", **{f"p{n}": f"p{n + 1}" for n in range(2, 20)}, "p20": ""})
    with LarderClient(fake.address, timeout=10) as client:
        assert len(list(client.iter_meal_records())) == 20


def test_async_iter_meal_records_stops_after_max_pages(fake, monkeypatch):
    from larder_client import rpc

    monkeypatch.setattr(rpc, "MAX_PAGES", 20)
    fake.handlers["/larder.v1.MealRecordService/ListMealRecords"] = _endless_pages()

    async def main():
        async with AsyncLarderClient(fake.address, timeout=10) as client:
            with pytest.raises(LarderError) as info:
                async for _ in client.iter_meal_records():
                    pass
            return info.value

    error = asyncio.run(asyncio.wait_for(main(), 60))
    assert error.code == StatusCode.RESOURCE_EXHAUSTED and "list_meal_records: stopped after 20 pages" in error.message


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


def test_async_eof_says_each_pending_request_was_sent(fake):
    async def main():
        connection = await AsyncConnection.connect("127.0.0.1", fake.port, connect_timeout=10)
        try:
            pending = asyncio.ensure_future(connection.call("/test/Wait", b"never", timeout=30))

            async def until_the_server_has_it():
                while not any(r.method == "/test/Wait" for r in fake.requests):
                    await asyncio.sleep(0.01)
            await asyncio.wait_for(until_the_server_has_it(), 30)
            with pytest.raises(LarderError) as info:
                await connection.call("/test/Close", b"", timeout=30)
            assert info.value.code == StatusCode.UNAVAILABLE and info.value.message.endswith(SENT), info.value.message
            with pytest.raises(LarderError) as waited:
                await pending
            assert waited.value.message.endswith(SENT), waited.value.message
        finally:
            await connection.close()

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


# --- sending: sizes, deadlines, interruptions, callbacks, fork ------------------------------------

class SilentPeer:
    """Accepts one connection and never reads from it (nor writes), so a client's sends stall."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.peer: socket.socket | None = None
        self._accepted = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.peer, _ = self._listener.accept()
        self._accepted.set()

    def wait_for_bytes(self) -> None:
        """Returns once the client's first bytes arrived (peeked, not read)."""
        assert self._accepted.wait(60)
        assert self.peer is not None
        self.peer.settimeout(60)
        assert self.peer.recv(1, socket.MSG_PEEK) != b""

    def close(self) -> None:
        if self.peer is not None:
            self.peer.close()
        self._listener.close()


@pytest.fixture
def silent():
    peer = SilentPeer()
    yield peer
    peer.close()


#: A request far larger than the kernel's socket buffers hold on loopback.
BIG = b"x" * (32 * 1024 * 1024)


def test_an_oversized_request_fails_alone_and_is_not_sent(fake):
    conn = Connection("127.0.0.1", fake.port, max_frame_bytes=1000)
    try:
        waiting = conn.call_future("/test/Wait", b"k", timeout=300)
        with pytest.raises(LarderError) as refused:
            conn.call("/test/Echo", b"y" * 2000, timeout=300)
        assert refused.value.code == StatusCode.RESOURCE_EXHAUSTED
        assert "it was not sent" in refused.value.message and "max_frame_bytes (1000" in refused.value.message
        assert conn.call("/test/Release", b"k", timeout=300) == b"k"
        assert waiting.result(60) == b"k"  # the call in flight was not disturbed
        assert conn.closed is None and not conn._pending
        assert [r.method for r in fake.requests].count("/test/Echo") == 0
    finally:
        conn.close()


def test_a_request_the_server_does_not_read_ends_at_its_deadline_and_closes_the_connection(silent):
    conn = Connection("127.0.0.1", silent.port, max_frame_bytes=64 * 1024 * 1024)
    try:
        with pytest.raises(LarderError) as stalled:
            conn.call("/test/Echo", BIG, timeout=1.0)
        assert stalled.value.code == StatusCode.DEADLINE_EXCEEDED
        assert "request not written" in stalled.value.message
        # Half a frame is on the wire: nothing more can follow it on this connection.
        assert conn.closed is not None and "cut off after" in conn.closed.message
    finally:
        conn.close()


def test_calls_waiting_behind_a_stalled_write_end_at_their_own_deadline(silent):
    conn = Connection("127.0.0.1", silent.port, max_frame_bytes=64 * 1024 * 1024)
    stuck = ThreadPoolExecutor(1).submit(conn.call, "/test/Echo", BIG, timeout=None)
    try:
        silent.wait_for_bytes()
        for _ in range(6000):  # the stuck writer holds the write lock
            if conn._write_lock.locked():
                break
            threading.Event().wait(0.01)
        with pytest.raises(LarderError) as waited:
            conn.call("/test/Echo", b"small", timeout=0.5)
        assert waited.value.code == StatusCode.DEADLINE_EXCEEDED
        assert "not sent" in waited.value.message
        assert conn.closed is None  # nothing of it was written
    finally:
        conn.close()  # ends the stuck write too
    with pytest.raises(LarderError) as ended:
        stuck.result(60)
    assert ended.value.code == StatusCode.UNAVAILABLE


def test_an_interrupted_send_closes_the_connection(silent):
    conn = Connection("127.0.0.1", silent.port, max_frame_bytes=64 * 1024 * 1024)
    main = threading.get_ident()

    def interrupt() -> None:
        silent.wait_for_bytes()
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            conn.call("/test/Echo", BIG, timeout=None)
        assert conn.closed is not None and "KeyboardInterrupt" in conn.closed.message
        with pytest.raises(LarderError) as after:
            conn.call("/test/Echo", b"", timeout=10)
        assert after.value.code == StatusCode.UNAVAILABLE
    finally:
        conn.close()


def test_the_async_client_bounds_a_write_the_server_does_not_take(silent):
    async def run() -> None:
        client = AsyncLarderClient(silent.address, timeout=1.0, max_frame_bytes=64 * 1024 * 1024)
        try:
            with pytest.raises(LarderError) as stalled:
                await client.call("/test/Echo", BIG)
            assert stalled.value.code == StatusCode.DEADLINE_EXCEEDED
            assert "request not taken" in stalled.value.message
            with pytest.raises(LarderError) as oversized:
                await client.call("/test/Echo", b"x" * (65 * 1024 * 1024))
            assert oversized.value.code == StatusCode.RESOURCE_EXHAUSTED
        finally:
            await client.close()

    asyncio.run(run())


@pytest.mark.parametrize("timeout, kind", [("5", TypeError), (True, TypeError), (float("nan"), ValueError),
                                           (float("inf"), ValueError), (1e10, ValueError)])
def test_bad_timeouts_are_refused_before_anything_is_sent(fake, timeout, kind):
    with LarderClient(fake.address) as client:
        with pytest.raises(kind, match="timeout"):
            client.call("/test/Echo", b"", timeout=timeout)
        for passed in (0, -1):
            with pytest.raises(LarderError) as late:
                client.call("/test/Echo", b"", timeout=passed)
            assert late.value.code == StatusCode.DEADLINE_EXCEEDED and "before the call was sent" in late.value.message
        with pytest.raises(TypeError, match="metadata"):
            client.call("/test/Echo", b"", metadata={"x-n": 5})  # type: ignore[dict-item]
        with pytest.raises(TypeError, match="protobuf message or bytes"):
            client.call("/test/Echo", None)  # type: ignore[arg-type]
        assert client.connection is not None and not client.connection._pending
        assert client.call("/test/Echo", b"ok", timeout=60) == b"ok"
    assert [r.payload for r in fake.requests] == [b"ok"]


def test_a_blocking_call_inside_a_future_callback_is_refused_not_stalled(fake):
    with LarderClient(fake.address, timeout=300) as client:
        outcome: list[BaseException] = []
        done = threading.Event()

        def callback(_):
            try:
                client.call("/test/Echo", b"inner")
            except BaseException as e:  # noqa: BLE001 - recorded for the assertion
                outcome.append(e)
            done.set()

        future = client.call_future("/test/Wait", b"cb")
        future.add_done_callback(callback)
        client.call("/test/Release", b"cb")
        assert done.wait(60)
        assert isinstance(outcome[0], RuntimeError) and ".future()" in str(outcome[0])
        assert client.call("/test/Echo", b"after") == b"after"


def test_a_cancelled_future_is_not_completed_later(fake, caplog):
    with LarderClient(fake.address, timeout=300) as client:
        future = client.call_future("/test/Wait", b"c")
        assert future.cancel()
        client.call("/test/Release", b"c")
        for _ in range(6000):
            if not client.connection._pending:
                break
            threading.Event().wait(0.01)
        assert client.call("/test/Echo", b"x") == b"x"
    assert not [r for r in caplog.records if "InvalidStateError" in r.getMessage()]


def test_a_call_waits_for_another_calls_connection_attempt_no_longer_than_its_timeout(silent):
    from larder_client import tls_context
    client = LarderClient(silent.address, tls=tls_context(insecure_skip_verify=True), connect=False,
                          connect_timeout=300)
    first = ThreadPoolExecutor(1).submit(client.check, timeout=None)  # its TLS handshake never ends
    try:
        for _ in range(6000):
            if client._lock.locked():
                break
            threading.Event().wait(0.01)
        with pytest.raises(LarderError) as waited:
            client.check(timeout=0.5)
        assert waited.value.code == StatusCode.DEADLINE_EXCEEDED
        assert "another call's connection attempt" in waited.value.message
    finally:
        silent.close()  # the handshake fails: the first call ends
    with pytest.raises(LarderError):
        first.result(60)
    client.close()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # fork() with the reader thread running
def test_a_forked_child_opens_its_own_connection(fake):
    with LarderClient(fake.address, timeout=60) as client:
        assert client.call("/test/Echo", b"parent") == b"parent"
        pid = os.fork()
        if pid == 0:  # the child: its calls must not use the parent's socket or call ids
            status = 1
            try:
                ok = client.call("/test/Echo", b"child") == b"child" and client.connects == 2
                status = 0 if ok else 1
            finally:
                os._exit(status)
        _, code = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(code) == 0
        assert client.call("/test/Echo", b"parent again") == b"parent again"
        assert client.connects == 1  # the parent kept its connection
    assert sorted(r.payload for r in fake.requests) == [b"child", b"parent", b"parent again"]


@pytest.mark.parametrize("address", ["127.0.0.1:113389", "127.0.0.1:65536", "127.0.0.1:0", ("127.0.0.1", 70000),
                                     "127.0.0.1:٣٣", "127.0.0.1:", "127.0.0.1"])
def test_an_address_without_a_valid_port_is_refused_before_connecting(fake, address):
    # getaddrinfo keeps the low 16 bits of a larger port: 113389 reached port 47853.
    with pytest.raises(ValueError, match="port|HOST:PORT"):
        LarderClient(address)

    async def run() -> None:
        with pytest.raises(ValueError, match="port|HOST:PORT"):
            AsyncLarderClient(address)

    asyncio.run(run())
    assert parse_address(f"[::1]:{fake.port}") == ("::1", fake.port)
    assert parse_address(("127.0.0.1", 65535)) == ("127.0.0.1", 65535)


def test_a_timeout_too_short_to_send_in_blames_the_timeout_not_other_calls(fake):
    with LarderClient(fake.address) as client:
        with pytest.raises(LarderError) as late:
            client.call("/test/Echo", b"", timeout=1e-9)
        assert late.value.code == StatusCode.DEADLINE_EXCEEDED
        assert "other calls" not in late.value.message, late.value.message


class _SlowConnection(Connection):
    """A connection whose opening takes at least 0.5 s (the client makes it through its module)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        threading.Event().wait(0.5)
        super().__init__(*args, **kwargs)


class _SlowAsyncConnection(AsyncConnection):
    @classmethod
    async def connect(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.5)
        return await super().connect(*args, **kwargs)


@pytest.mark.parametrize("way", ["call", "future"])
def test_connecting_spends_the_calls_timeout(fake, monkeypatch, way):
    """A call's timeout covers its connection attempt: the server is sent what is left of it, and a
    timeout the attempt used up ends the call unsent. Connecting took the whole timeout again first."""
    monkeypatch.setattr("larder_client.client.Connection", _SlowConnection)
    with LarderClient(fake.address, connect=False) as client:
        send = client.call if way == "call" else lambda *a, **k: client.call_future(*a, **k).result(60)
        assert send("/test/Echo", b"x", timeout=100) == b"x"
        assert fake.requests[-1].timeout_ms <= 99_500  # at least 0.5 s of 100 went on connecting
    with LarderClient(fake.address, connect=False) as client:
        with pytest.raises(LarderError) as late:
            send = client.call if way == "call" else lambda *a, **k: client.call_future(*a, **k).result(60)
            send("/test/Echo", b"y", timeout=0.2)
        assert late.value.code == StatusCode.DEADLINE_EXCEEDED
    assert [r.payload for r in fake.requests] == [b"x"]


def test_the_async_client_spends_the_calls_timeout_on_connecting(fake, monkeypatch):
    monkeypatch.setattr("larder_client.client.AsyncConnection", _SlowAsyncConnection)

    async def run() -> LarderError:
        client = AsyncLarderClient(fake.address)
        try:
            assert await client.call("/test/Echo", b"x", timeout=100) == b"x"
            assert fake.requests[-1].timeout_ms <= 99_500
        finally:
            await client.close()
        client = AsyncLarderClient(fake.address)
        try:
            with pytest.raises(LarderError) as late:
                await client.call("/test/Echo", b"y", timeout=0.2)
            return late.value
        finally:
            await client.close()

    error = asyncio.run(run())
    assert error.code == StatusCode.DEADLINE_EXCEEDED
    assert [r.payload for r in fake.requests] == [b"x"]
