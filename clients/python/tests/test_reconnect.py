"""Both clients reconnect on the next call after the connection dropped (issue 14 item 13).

Against the fake server: a call in flight when the connection drops fails with
UNAVAILABLE and is never re-sent; failed attempts back off. Against the real
server: its idle timeout, a restart on the same port and database, and a
server that is down for a while and then back.
"""
from __future__ import annotations

import asyncio
import gc
import signal
import socket
import time
import warnings
from typing import Callable, TypeVar

import pytest

from fake_server import FakeServer, reply
from larder_client import AsyncLarderClient, Backoff, LarderClient, LarderError, StatusCode
from larder_client.messages import HealthCheckResponse

T = TypeVar("T")
WAIT = 60.0  # generous bound for events on a busy machine; never a speed assertion


def eventually(probe: Callable[[], T], what: str, bound: float = WAIT) -> T:
    """Polls probe() until it returns a truthy value (or stops raising LarderError)."""
    deadline = time.monotonic() + bound
    last: object = None
    while time.monotonic() < deadline:
        try:
            result = probe()
            if result:
                return result
        except LarderError as e:
            last = e
        time.sleep(0.02)
    raise AssertionError(f"{what} within {bound} s (last: {last})")


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        return int(listener.getsockname()[1])


@pytest.fixture
def fake():
    server = FakeServer()
    yield server
    server.stop()


# --- backoff -------------------------------------------------------------------------------------

def test_backoff_doubles_up_to_its_cap_and_resets():
    backoff = Backoff(initial=0.1, maximum=1.0, multiplier=2.0, jitter=0.2, random_fraction=lambda: 0.5)
    assert [round(backoff.next_delay(), 6) for _ in range(6)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    backoff.reset()
    assert backoff.next_delay() == pytest.approx(0.1)


@pytest.mark.parametrize("fraction, factor", [(0.0, 0.8), (0.999999, 1.2)])
def test_backoff_jitter_stays_within_its_bounds(fraction, factor):
    backoff = Backoff(initial=0.5, maximum=4.0, jitter=0.2, random_fraction=lambda: fraction)
    delays = [backoff.next_delay() for _ in range(5)]
    assert delays == pytest.approx([factor * d for d in (0.5, 1.0, 2.0, 4.0, 4.0)], rel=1e-5)


def test_backoff_spreads_many_clients():
    delays = {round(Backoff().next_delay(), 9) for _ in range(50)}
    assert len(delays) > 40 and all(0.08 <= d <= 0.12 for d in delays)


# --- against the fake server ---------------------------------------------------------------------

def test_a_call_in_flight_when_the_connection_drops_fails_and_is_not_resent(fake):
    with LarderClient(fake.address, timeout=30) as client:
        pending = client.call_future("/test/Wait", b"in-flight")
        with pytest.raises(LarderError) as info:
            client.call("/test/Close", b"")  # the server drops the connection without a reply
        assert info.value.code is StatusCode.UNAVAILABLE
        error = pending.exception(WAIT)
        assert isinstance(error, LarderError) and error.code is StatusCode.UNAVAILABLE
        eventually(lambda: not client.connected, "the client notices the drop")
        assert client.call("/test/Echo", b"next") == b"next"  # the next call reconnects
        assert client.connects == 2
        fake.release(b"in-flight")
        assert client.call("/test/Echo", b"after") == b"after"
    sent = [(r.method, r.payload) for r in fake.requests]
    assert sent.count(("/test/Wait", b"in-flight")) == 1  # never re-sent on the new connection
    assert sent.count(("/test/Close", b"")) == 1


def test_a_call_that_finds_the_connection_closed_before_sending_goes_on_a_new_one(fake, monkeypatch):
    """The window between the client's check and the send: the call never left, so it is sent once, anew."""
    with LarderClient(fake.address, timeout=30) as client:
        stale = client.connection
        assert stale is not None
        stale.close()  # closed under the client, which has not looked yet
        real = client._connected
        handed: list[object] = []

        def racing(timeout=None):
            handed.append(stale if not handed else real(timeout))
            return handed[-1]

        monkeypatch.setattr(client, "_connected", racing)
        assert client.call("/test/Echo", b"once") == b"once"
        assert handed[0] is stale and handed[1] is not stale and client.connects == 2
    assert [r.payload for r in fake.requests if r.method == "/test/Echo"] == [b"once"]


def test_typed_calls_reconnect_too(fake):
    serving = HealthCheckResponse(status=HealthCheckResponse.SERVING).SerializeToString()
    fake.handlers["/grpc.health.v1.Health/Check"] = lambda request: reply(request, serving)
    with LarderClient(fake.address, timeout=30) as client:
        assert client.check().status == HealthCheckResponse.SERVING
        with pytest.raises(LarderError):
            client.call("/test/Close", b"")
        eventually(lambda: not client.connected, "the client notices the drop")
        assert client.health.check().status == HealthCheckResponse.SERVING
        assert client.check.future().result(WAIT).status == HealthCheckResponse.SERVING
        assert client.connects == 2


def test_failed_attempts_back_off_and_calls_fail_fast_meanwhile():
    port = free_port()
    backoff = Backoff(initial=30.0, maximum=60.0)  # long enough that the second call is surely inside it
    client = LarderClient(("127.0.0.1", port), timeout=30, connect=False, backoff=backoff)
    try:
        with pytest.raises(LarderError) as first:
            client.check()
        assert first.value.code is StatusCode.UNAVAILABLE and f"127.0.0.1:{port}" in first.value.message
        assert backoff.failures == 1
        with pytest.raises(LarderError) as second:
            client.check()  # no new attempt: the backoff after the failed one still runs
        assert second.value.code is StatusCode.UNAVAILABLE
        assert "next connection attempt in" in second.value.message
        assert backoff.failures == 1
    finally:
        client.close()


def test_the_next_call_after_the_backoff_connects_once_the_server_is_there():
    port = free_port()
    backoff = Backoff(initial=0.05, maximum=0.2)
    client = LarderClient(("127.0.0.1", port), timeout=30, connect=False, backoff=backoff)
    try:
        for _ in range(3):
            with pytest.raises(LarderError) as info:
                client.call("/test/Echo", b"")
            assert info.value.code is StatusCode.UNAVAILABLE
        server = FakeServer(port)
        try:
            assert eventually(lambda: client.call("/test/Echo", b"up"), "a call succeeds") == b"up"
            assert client.connects == 1 and backoff.failures == 0  # reset by the successful connect
        finally:
            server.stop()
    finally:
        client.close()


def test_a_closed_client_does_not_reconnect(fake):
    client = LarderClient(fake.address, timeout=30)
    client.close()
    with pytest.raises(LarderError) as info:
        client.call("/test/Echo", b"")
    assert info.value.code is StatusCode.UNAVAILABLE and "closed" in info.value.message
    assert client.connects == 1


def test_an_unclosed_client_warns_and_gives_its_connection_back_when_collected(fake):
    client = LarderClient(fake.address, timeout=30)
    assert client.call("/test/Echo", b"x") == b"x"
    connection = client.connection
    assert connection is not None
    with pytest.warns(ResourceWarning, match="unclosed LarderClient"):
        del client
        gc.collect()  # the client's services refer back to it: a cycle, freed by the collector
    connection._reader.join(WAIT)  # the finalizer shut the socket down; the reader ends it
    assert not connection._reader.is_alive()
    assert connection.closed is not None


def test_a_closed_client_is_collected_without_a_warning(fake):
    client = LarderClient(fake.address, timeout=30)
    client.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        del client
        gc.collect()


def test_an_unclosed_async_client_warns_when_collected(fake):
    async def main() -> None:
        client = AsyncLarderClient(fake.address, timeout=30)
        assert await client.call("/test/Echo", b"x") == b"x"
        connection = client._connection
        assert connection is not None
        with pytest.warns(ResourceWarning, match="unclosed AsyncLarderClient"):
            del client
            gc.collect()
        assert connection.closed is not None
        await asyncio.wait_for(connection._read_task, WAIT)

    asyncio.run(main())


def test_async_client_reconnects_and_never_resends(fake):
    async def main() -> None:
        async with AsyncLarderClient(fake.address, timeout=30) as client:
            pending = asyncio.ensure_future(client.call("/test/Wait", b"async-in-flight"))
            await asyncio.sleep(0.05)  # let it be sent (the assertion below checks it was, once)
            with pytest.raises(LarderError) as info:
                await client.call("/test/Close", b"")
            assert info.value.code is StatusCode.UNAVAILABLE
            with pytest.raises(LarderError) as info:
                await pending
            assert info.value.code is StatusCode.UNAVAILABLE
            assert await client.call("/test/Echo", b"next") == b"next"
            assert client.connects == 2

    asyncio.run(main())
    sent = [(r.method, r.payload) for r in fake.requests]
    assert sent.count(("/test/Wait", b"async-in-flight")) == 1


def test_async_client_backs_off_between_failed_attempts():
    port = free_port()

    async def main() -> None:
        backoff = Backoff(initial=30.0, maximum=60.0)
        client = AsyncLarderClient(("127.0.0.1", port), timeout=30, backoff=backoff)
        with pytest.raises(LarderError) as first:
            await client.check()
        assert first.value.code is StatusCode.UNAVAILABLE
        with pytest.raises(LarderError) as second:
            await client.check()
        assert "next connection attempt in" in second.value.message and backoff.failures == 1
        await client.close()

    asyncio.run(main())


# --- against the real server ---------------------------------------------------------------------

# One call after each reconnect: a second one more than the idle timeout later (a very busy
# machine) could cross the server's close of the new connection and fail, rightly, UNAVAILABLE.
# The clients connect at their first call, not before: a stall between connecting and that call
# would let the idle timeout close the first connection before it was used.
def test_reconnects_after_the_server_idle_timeout(start_server):
    server = start_server("--idle-timeout", "5")
    with server.client(connect=False) as client:
        assert client.check().status == HealthCheckResponse.SERVING
        eventually(lambda: not client.connected, "the server closes the idle connection")
        assert len(client.list_locations().locations) == 4
        assert client.connects == 2


def test_async_client_reconnects_after_the_server_idle_timeout(start_server):
    server = start_server("--idle-timeout", "5")

    async def main() -> None:
        client = AsyncLarderClient(server.address, timeout=30)  # `async with` would connect first
        try:
            assert (await client.check()).status == HealthCheckResponse.SERVING
            deadline = time.monotonic() + WAIT
            while client.connected and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert not client.connected, "the server did not close the idle connection"
            assert (await client.check()).status == HealthCheckResponse.SERVING
            assert client.connects == 2
        finally:
            await client.close()

    asyncio.run(main())


def test_reconnects_after_a_restart_on_the_same_port_and_database(start_server, tmp_path):
    db = tmp_path / "larder.sqlite"
    first = start_server(db=db)
    with first.client() as client:
        created = client.create_location(location={"name": "儲藏室", "color_hex": "#0F0F0F"})
        first.signal(signal.SIGTERM)
        assert first.wait(120) == 0
        eventually(lambda: not client.connected, "the client notices the server is gone")
        second = start_server(db=db, port=first.port)
        assert second.port == first.port
        assert client.get_location(id=created.id) == created
        assert client.connects == 2


def test_reconnects_when_the_server_is_back_after_a_while(start_server, tmp_path):
    db = tmp_path / "larder.sqlite"
    first = start_server(db=db)
    backoff = Backoff(initial=0.3, maximum=1.0)
    with first.client(backoff=backoff) as client:
        assert client.check().status == HealthCheckResponse.SERVING
        first.signal(signal.SIGTERM)
        assert first.wait(120) == 0
        eventually(lambda: not client.connected, "the client notices the server is gone")
        refused = 0
        deadline = time.monotonic() + WAIT
        while backoff.failures < 3 and time.monotonic() < deadline:  # down for a while (about 1 s)
            with pytest.raises(LarderError) as info:
                client.check()  # fails fast with UNAVAILABLE
            assert info.value.code is StatusCode.UNAVAILABLE, str(info.value)
            refused += 1
            time.sleep(0.01)
        attempts = backoff.failures
        assert attempts >= 3 and refused > attempts  # most calls did not even try: the backoff ran
        second = start_server(db=db, port=first.port)
        status = eventually(lambda: client.check().status, "a call succeeds once the server is back")
        assert status == HealthCheckResponse.SERVING and second.process.poll() is None
        assert client.connects == 2 and backoff.failures == 0


def test_async_client_reconnects_when_the_server_is_back_on_the_same_port_and_database(start_server, tmp_path):
    db = tmp_path / "larder.sqlite"
    first = start_server(db=db)

    async def main() -> None:
        backoff = Backoff(initial=0.05, maximum=0.5)
        async with AsyncLarderClient(first.address, timeout=30, backoff=backoff) as client:
            created = await client.create_location(location={"name": "閣樓", "color_hex": "#101010"})
            first.signal(signal.SIGTERM)
            assert await asyncio.to_thread(first.wait, 30) == 0
            deadline = time.monotonic() + WAIT
            while client.connected and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            with pytest.raises(LarderError) as info:  # down: UNAVAILABLE at once
                await client.get_location(id=created.id)
            assert info.value.code is StatusCode.UNAVAILABLE
            await asyncio.to_thread(start_server, db=db, port=first.port)
            deadline = time.monotonic() + WAIT
            while True:
                try:
                    assert await client.get_location(id=created.id) == created
                    break
                except LarderError as e:
                    assert e.code is StatusCode.UNAVAILABLE and time.monotonic() < deadline, str(e)
                    await asyncio.sleep(0.02)
            assert client.connects == 2 and backoff.failures == 0

    asyncio.run(main())
