"""larder_client (sync and asyncio) over TLS against the real larder-server."""
from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import pytest

import tls_certificates
from fake_server import RawPeer, read_some
from larder_client import AsyncLarderClient, LarderClient, LarderError, StatusCode, tls_context
from larder_client.messages import CreateLocationRequest, Location


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return tls_certificates.make(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_server(start_module_server, certs):
    return start_module_server(*certs.server_flags(), "--log-level", "debug")


def test_sync_client_over_tls_beside_cleartext(tls_server, certs):
    with LarderClient(tls_server.address, tls=tls_context(certs.ca), server_hostname="localhost", timeout=60) as secure, \
            LarderClient(tls_server.address, timeout=60) as clear:
        created = secure.create_location(CreateLocationRequest(location=Location(name="Python TLS", color_hex="#123456")))
        assert secure.connection.tls.alpn == "larder"
        assert secure.connection.tls.version == "TLSv1.3"
        assert clear.connection.tls is None
        # Many threads share the TLS connection: reads and writes interleave on one session.
        with ThreadPoolExecutor(16) as pool:
            counts = list(pool.map(lambda _: len(secure.list_locations().locations), range(200)))
        assert set(counts) == {len(clear.list_locations().locations)}
        assert clear.get_location(id=created.id).name == "Python TLS"


def test_tls12_handshakes_are_all_completed(tls_server, certs):
    """Review 36 H1: the server's ClientHello size check read a TLS 1.2 client's encrypted
    Finished (a handshake record) as a handshake header, and about 1 handshake in 256 was
    refused as "the ClientHello is too large". 1,000 full handshakes: each must complete."""
    context = tls_context(certs.ca)
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    host, port = tls_server.address.rsplit(":", 1)
    for _ in range(1000):
        with socket.create_connection((host, int(port)), timeout=60) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                assert tls.version() == "TLSv1.2"


def test_by_address_the_certificate_must_list_it(tls_server, certs):
    with LarderClient(tls_server.address, tls=tls_context(certs.ca), timeout=60) as client:  # 127.0.0.1
        assert client.check().status == 1


def test_wrong_ca_is_a_clear_error(tls_server, certs):
    with pytest.raises(LarderError) as raised:
        LarderClient(tls_server.address, tls=tls_context(certs.other_ca), server_hostname="localhost", timeout=60)
    assert raised.value.code == StatusCode.UNAVAILABLE
    assert "TLS handshake with" in raised.value.message
    assert "unable to get local issuer certificate" in raised.value.message


def test_tls_to_a_cleartext_server_says_so(shared_server, certs):
    with pytest.raises(LarderError) as raised:
        LarderClient(shared_server.address, tls=tls_context(certs.ca), server_hostname="localhost", timeout=60)
    assert raised.value.code == StatusCode.UNAVAILABLE
    assert "the server did not answer with TLS: is it serving TLS on this port" in raised.value.message


def test_hostname_mismatch_is_a_clear_error(tls_server, certs):
    with pytest.raises(LarderError) as raised:
        LarderClient(tls_server.address, tls=tls_context(certs.ca), server_hostname="larder.example.com", timeout=60)
    assert "Hostname mismatch" in raised.value.message or "mismatch" in raised.value.message.lower()


def test_asyncio_client_over_tls(tls_server, certs):
    async def run() -> None:
        async with AsyncLarderClient(tls_server.address, tls=tls_context(certs.ca), server_hostname="localhost",
                                     timeout=60) as client:
            results = await asyncio.gather(*(client.list_locations() for _ in range(100)))
            assert len({len(r.locations) for r in results}) == 1
            assert (await client.check()).status == 1
            assert client.connection is not None and client.connection.tls is not None
            assert (client.connection.tls.alpn, client.connection.tls.version) == ("larder", "TLSv1.3")

    asyncio.run(run())


def test_asyncio_wrong_ca_is_a_clear_error(tls_server, certs):
    async def run() -> LarderError:
        with pytest.raises(LarderError) as raised:
            await AsyncLarderClient.connect(tls_server.address, tls=tls_context(certs.other_ca),
                                            server_hostname="localhost", timeout=60)
        return raised.value

    error = asyncio.run(run())
    assert error.code == StatusCode.UNAVAILABLE and "unable to get local issuer certificate" in error.message


def test_client_certificate_required(start_server, certs):
    server = start_server(*certs.server_flags(), "--tls-client-ca", certs.ca, "--tls-client-auth", "require",
                          "--access-log")
    context = tls_context(certs.ca, certfile=certs.client_cert, keyfile=certs.client_key)
    with LarderClient(server.address, tls=context, server_hostname="localhost", timeout=60) as client:
        assert len(client.list_locations().locations) == 4
    with pytest.raises(LarderError) as raised:
        with LarderClient(server.address, tls=tls_context(certs.ca), server_hostname="localhost", timeout=60) as c:
            c.list_locations()
    assert raised.value.code == StatusCode.UNAVAILABLE


def test_asyncio_call_on_a_tls_connection_that_just_closed_is_unavailable(tls_server, certs):
    """After the TLS transport lost its connection, and before the reader task heard of it, a
    call's write used to raise AttributeError from CPython's SSL transport (audit 12 F6)."""
    from larder_client.aio import AsyncConnection

    host, port = tls_server.address.rsplit(":", 1)

    async def run() -> LarderError:
        connection = await AsyncConnection.connect(host, int(port), tls=tls_context(certs.ca),
                                                   server_hostname="localhost")
        await connection.call("/grpc.health.v1.Health/Check", timeout=60)
        # The connection is lost and its transport closed again (as closing the writer does),
        # before the reader task has told the calls: CPython's SSL transport then drops its
        # protocol, and a write raised AttributeError.
        connection._writer.transport.abort()
        await asyncio.sleep(0)
        connection._writer.close()
        with pytest.raises(LarderError) as raised:
            await connection.call("/grpc.health.v1.Health/Check", timeout=60)
        await connection.close()
        return raised.value

    error = asyncio.run(run())
    assert error.code == StatusCode.UNAVAILABLE, error


# --- TLS peers that misbehave (fake_server.RawPeer) -------------------------------------------------

def _outcome_within(seconds: float, action: Callable[[], Any]) -> Any:
    """What `action` returned or raised, run in a thread of its own; fails the test when it has
    not ended within `seconds` (the thread is left to end when the peer is stopped)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(action())
        except BaseException as e:  # noqa: B902 (handed to the test)
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s")
    return outcome[0]


def _trickle_handshake(conn: socket.socket, stopped: threading.Event) -> None:
    """Reads the ClientHello, then answers with a handshake record of 16 KiB, one byte every
    0.2 s: a peer slow enough to take an hour, fast enough for any per-read timeout."""
    read_some(conn, stopped)
    conn.sendall(b"\x16\x03\x03\x40\x00")
    while not stopped.wait(0.2):
        conn.sendall(b"\x00")


@pytest.fixture
def trickle():
    peer = RawPeer(_trickle_handshake)
    yield peer
    peer.stop()


def test_a_trickled_handshake_ends_at_connect_timeout(trickle):
    """The sync client's handshake had a timeout per read, not for the whole handshake: one
    byte every 0.2 s kept it going for as long as the peer liked (audit 14 H1)."""
    started = time.monotonic()
    error = _outcome_within(30, lambda: LarderClient(trickle.address, tls=tls_context(insecure_skip_verify=True),
                                                     connect_timeout=2))
    assert isinstance(error, LarderError), error
    assert error.code == StatusCode.UNAVAILABLE
    assert f"TLS handshake with {trickle.address} did not complete within 2 s" in error.message
    assert time.monotonic() - started < 30


def test_a_trickled_handshake_ends_at_the_calls_timeout(trickle):
    """A connection attempt waits at most connect_timeout and at most the call's timeout."""
    client = LarderClient(trickle.address, tls=tls_context(insecure_skip_verify=True), connect_timeout=600,
                          connect=False)
    try:
        error = _outcome_within(30, lambda: client.health.check(timeout=2))
    finally:
        trickle.stop()  # ends a handshake still running, which holds the lock close() takes
        client.close()
    assert isinstance(error, LarderError), error
    assert error.code == StatusCode.UNAVAILABLE
    assert "TLS handshake" in error.message and "within 2 s" in error.message


def test_the_async_client_ends_a_trickled_handshake_at_connect_timeout(trickle):
    async def run() -> LarderError:
        with pytest.raises(LarderError) as raised:
            await AsyncLarderClient.connect(trickle.address, tls=tls_context(insecure_skip_verify=True),
                                            connect_timeout=2)
        return raised.value

    error = _outcome_within(30, lambda: asyncio.run(run()))
    assert isinstance(error, LarderError), error
    assert error.code == StatusCode.UNAVAILABLE


def _close_notify(certs, at_once: bool = False):
    """A TLS peer that completes the handshake, reads the first request, then sends close_notify
    and leaves TCP open (until stopped). at_once: TLS 1.2, close_notify in the same write as the
    server's Finished, so that the client's handshake reads it with its last bytes."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs.server_cert, certs.server_key)
    context.set_alpn_protocols(["larder"])
    if at_once:
        context.maximum_version = ssl.TLSVersion.TLSv1_2

    def script(conn: socket.socket, stopped: threading.Event) -> None:
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        session = context.wrap_bio(incoming, outgoing, server_side=True)
        request = b""
        while not request:
            try:
                if session.do_handshake() is None:
                    if at_once:
                        break
                    request = session.read(65536)
            except ssl.SSLWantReadError:
                pass
            conn.sendall(outgoing.read())
            if request:
                break
            data = read_some(conn, stopped)
            if not data:
                return
            incoming.write(data)
        try:
            session.unwrap()  # close_notify; it would wait for the client's
        except ssl.SSLWantReadError:
            pass
        conn.sendall(outgoing.read())
        stopped.wait(120)  # TCP stays open

    return script


@pytest.fixture(params=["after the request", "with the handshake"])
def close_notify_peer(request, certs):
    peer = RawPeer(_close_notify(certs, at_once=request.param == "with the handshake"))
    yield peer
    peer.stop()


def test_close_notify_with_tcp_left_open_ends_the_connection(close_notify_peer, certs):
    """The sync client read past the server's close_notify, waiting for TCP's end: for ever with
    no timeout, DEADLINE_EXCEEDED with one (audit 14 M5)."""
    client = LarderClient(close_notify_peer.address, tls=tls_context(certs.ca), server_hostname="localhost")
    try:
        error = _outcome_within(30, lambda: client.health.check(timeout=None))
    finally:
        close_notify_peer.stop()
        client.close()
    assert isinstance(error, LarderError), error
    assert error.code == StatusCode.UNAVAILABLE
    assert f"connection to {close_notify_peer.address} closed by the server" in error.message


def test_the_async_client_ends_the_connection_at_close_notify(close_notify_peer, certs):
    async def run() -> LarderError:
        async with AsyncLarderClient(close_notify_peer.address, tls=tls_context(certs.ca),
                                     server_hostname="localhost") as client:
            with pytest.raises(LarderError) as raised:
                await client.health.check(timeout=None)
        return raised.value

    error = _outcome_within(30, lambda: asyncio.run(run()))
    assert isinstance(error, LarderError), error
    assert error.code == StatusCode.UNAVAILABLE and "closed by the server" in error.message


def test_the_clis_tls_variables_turn_tls_on(tls_server, certs, monkeypatch):
    """$LARDER_TLS, $LARDER_CA and $LARDER_SERVER_NAME mean for LarderClient() what they mean for
    `larder`: before, it took $LARDER_SERVER and $LARDER_TOKEN from such a shell and sent the token
    in clear text (audit 20 F3)."""
    monkeypatch.setenv("LARDER_SERVER", tls_server.address)
    monkeypatch.setenv("LARDER_TLS", "1")
    monkeypatch.setenv("LARDER_CA", certs.ca)
    monkeypatch.setenv("LARDER_SERVER_NAME", "localhost")
    with LarderClient(timeout=60) as client:
        assert client.check().status == 1
        assert client.connection is not None and client.connection.tls is not None
        assert client.connection.tls.alpn == "larder"
    monkeypatch.setenv("LARDER_TLS", "maybe")
    with pytest.raises(ValueError, match="LARDER_TLS must be 1/true/yes/on or 0/false/no/off"):
        LarderClient(timeout=60, connect=False)
    monkeypatch.setenv("LARDER_TLS", "0")
    with LarderClient(timeout=60, connect=False) as clear:
        assert clear.tls is None


def test_a_token_in_clear_text_to_a_remote_host_is_warned_about(monkeypatch):
    """A token about to go to a non-loopback host without TLS (audit 20 F4); nothing connects."""
    monkeypatch.delenv("LARDER_TLS", raising=False)
    with pytest.warns(UserWarning, match="the token goes to 192.0.2.1:7411 in clear text"):
        LarderClient("192.0.2.1:7411", token="s3cret", connect=False).close()
    with pytest.warns(UserWarning, match="the token goes to 127.example.com:7411"):
        LarderClient("127.example.com:7411", token="s3cret", connect=False).close()  # a name, not an address
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LarderClient("127.0.0.1:7411", token="s3cret", connect=False).close()
        LarderClient("[::1]:7411", token="s3cret", connect=False).close()
        LarderClient("192.0.2.1:7411", connect=False).close()


def test_the_token_file_variable_is_read_as_larder_reads_it(tmp_path, monkeypatch):
    monkeypatch.delenv("LARDER_TOKEN", raising=False)
    token_file = tmp_path / "token"
    token_file.write_text("from-a-file\n")
    monkeypatch.setenv("LARDER_TOKEN_FILE", str(token_file))
    with LarderClient("127.0.0.1:7411", connect=False) as client:
        assert client.metadata["authorization"] == "Bearer from-a-file"
