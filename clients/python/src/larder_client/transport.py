"""The Larder wire protocol on one TCP connection (the reference transport).

Frame: 4-byte unsigned big-endian length N, then N bytes of protobuf:
RequestEnvelope client->server, ResponseEnvelope server->client. Many calls
may be in flight; replies arrive in any order, matched by call_id. A reply
with call_id 0 is a connection-level error: the server closes right after it,
so every pending call fails with its status.

Threads: callers write whole frames under a write lock; one reader thread
resolves each reply's future from the dict of pending calls. A write waits at
most until the call's deadline; a frame cut off part way (the deadline passed,
or the caller was interrupted) ends the connection, since the server cannot
read the next frame after it.
"""
from __future__ import annotations

import math
import select
import socket
import ssl
import struct
import threading
import time
from concurrent.futures import Future, InvalidStateError, TimeoutError as FutureTimeout
from typing import Mapping, Optional

from google.protobuf.message import DecodeError

from ._gen.larder.rpc.v1.envelope_pb2 import RequestEnvelope, ResponseEnvelope
from .status import LarderError, StatusCode
from .tls import TLSChannel, TLSStream

HEADER = struct.Struct(">I")
DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024


def check_request_size(method: str, frame: bytes, max_frame_bytes: int) -> None:
    """RESOURCE_EXHAUSTED for a request frame larger than max_frame_bytes, before it is sent.

    The server closes the whole connection on a frame over its --max-frame-bytes (default
    4 MiB, the client's default max_frame_bytes), failing every other call on it: refusing
    the one call here keeps them."""
    size = len(frame) - HEADER.size
    if size > max_frame_bytes:
        raise LarderError(StatusCode.RESOURCE_EXHAUSTED,
                          f"{method}: the request is {size} bytes, more than max_frame_bytes ({max_frame_bytes}, "
                          "the server's default --max-frame-bytes); it was not sent. Raise max_frame_bytes only "
                          "for a server started with a larger --max-frame-bytes")


def encode_request(call_id: int, method: str, payload: bytes, timeout: Optional[float],
                   metadata: Optional[Mapping[str, str]]) -> bytes:
    """One framed RequestEnvelope; timeout (seconds) becomes timeout_ms, rounded up."""
    timeout_ms = 0 if timeout is None else min(0xFFFFFFFF, max(1, math.ceil(timeout * 1000)))
    body = RequestEnvelope(call_id=call_id, method=method, payload=payload, timeout_ms=timeout_ms,
                           metadata={k.lower(): v for k, v in (metadata or {}).items()}
                           ).SerializeToString()
    return HEADER.pack(len(body)) + body


#: How many bytes after its header tell an HTTP/2 SETTINGS frame from a lean frame: the flags
#: and stream id, all zero, where a lean frame's envelope has its first field's tag (never 0).
H2_SETTINGS_PEEK = 5


def foreign_reply_error(address: str, header: bytes, *, tls: bool) -> Optional[LarderError]:
    """UNAVAILABLE with a hint when a reply's first 4 bytes are another protocol's (HTTP/1.x or
    other text, or, on a cleartext connection, a TLS record): no Larder frame starts so, since
    --max-frame-bytes is at most 256 MiB (a length prefix's first byte is at most 0x10)."""
    if header == b"HTTP":
        return LarderError(StatusCode.UNAVAILABLE, f"{address} answered in HTTP/1.x, not in Larder frames (its "
                                                   "reply starts \"HTTP\"): is it a Larder server?")
    if all(0x20 <= byte <= 0x7E for byte in header):
        return LarderError(StatusCode.UNAVAILABLE, f"{address} answered with text, not in Larder frames (its reply "
                                                   f"starts \"{header.decode('ascii')}\"): is it a Larder server?")
    if not tls and 0x14 <= header[0] <= 0x17 and header[1] == 0x03:
        return LarderError(StatusCode.UNAVAILABLE,
                           f"{address} answered with TLS (its reply starts like a TLS record), not in cleartext "
                           "Larder frames: does the server want TLS (tls=larder_client.tls_context(...))?")
    return None


def may_be_h2_settings(header: bytes) -> bool:
    """Whether a first reply's 4 bytes may begin an HTTP/2 SETTINGS frame (a 24-bit length, a
    multiple of 6, then type 4): h2_settings_error tells from the next H2_SETTINGS_PEEK bytes."""
    return header[3] == 0x04 and int.from_bytes(header[:3], "big") % 6 == 0


def h2_settings_error(address: str, start: bytes, expected: int) -> Optional[LarderError]:
    """UNAVAILABLE with a hint when the `expected` bytes after a header that may_be_h2_settings
    are all zero (the SETTINGS frame's flags and stream id): an HTTP/2 server, which speaks
    first. Fewer bytes (the connection ended) are no such frame: the caller sees the end."""
    if len(start) < expected or any(start):
        return None
    return LarderError(StatusCode.UNAVAILABLE,
                       f"{address} answered in HTTP/2 (its reply starts with an HTTP/2 SETTINGS frame), not in "
                       "Larder frames: it serves gRPC only; use a gRPC client (grpcio) for gRPC servers")


def with_delivery(reason: LarderError, sent: bool) -> LarderError:
    """`reason` for one call pending when its connection broke or closed, saying whether its
    request was sent (the server may have applied it) or not (safe to send again), as the
    Swift client and the `larder` CLI say it."""
    told = "the request was sent: the server may have applied it" if sent else "the request was not sent"
    return LarderError(reason.raw_code, f"{reason.message} ({told})")


class NotSent(LarderError):
    """UNAVAILABLE raised before a call left this client: the connection was already closed.

    Safe to send the call again on a new connection (LarderClient does, once).
    """


class Connection:
    """A thread-safe connection carrying many concurrent calls.

    Raises LarderError(UNAVAILABLE) when it cannot connect.
    """

    def __init__(self, host: str, port: int, *, connect_timeout: float = 10.0,
                 max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, tls: Optional[ssl.SSLContext] = None,
                 server_hostname: Optional[str] = None) -> None:
        self.address = f"{host}:{port}"
        deadline = time.monotonic() + connect_timeout  # TCP and the TLS handshake together
        try:
            self._sock = socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as e:
            raise LarderError(StatusCode.UNAVAILABLE, f"cannot connect to {self.address}: {e}") from None
        self._sock.settimeout(None)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        #: The TLS session (tls.TLSChannel: .alpn, .version), or None in cleartext.
        self.tls: Optional[TLSChannel] = None
        if tls is not None:
            try:
                self.tls = TLSChannel(self._sock, tls, server_hostname or host, self.address, connect_timeout,
                                      deadline=deadline)
            except LarderError:
                self._sock.close()
                raise
        self._max_frame_bytes = max_frame_bytes
        self._lock = threading.Lock()        # guards _pending, _next_id, _closed
        self._write_lock = threading.Lock()  # whole frames, one at a time
        self._pending: dict[int, Future[bytes]] = {}
        self._sent: set[int] = set()         # pending calls whose request began to be written
        self._next_id = 1                    # never reused: a late reply matches nothing
        self._closed: Optional[LarderError] = None
        self._reader = threading.Thread(target=self._read_loop, daemon=True, name="larder-reader")
        self._reader.start()

    def call(self, method: str, payload: bytes = b"", *, timeout: Optional[float] = None,
             metadata: Optional[Mapping[str, str]] = None) -> bytes:
        """Sends one call and waits for its reply payload; raises LarderError.

        timeout (seconds) is sent as timeout_ms and also enforced here, so the
        call fails with DEADLINE_EXCEEDED even if the server never answers
        (or never reads the request). Raises RuntimeError when called from a
        Future callback, which runs on the thread that delivers replies.
        """
        if threading.current_thread() is self._reader:
            raise RuntimeError(f"{method}: a blocking call from a Future's callback would wait for the thread "
                               "that runs the callback, which delivers every reply; start it with .future() "
                               "there, or call from another thread")
        deadline = None if timeout is None else time.monotonic() + timeout
        call_id, future = self._start(method, payload, timeout, metadata, deadline)
        try:
            return future.result(None if deadline is None else max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            with self._lock:
                self._pending.pop(call_id, None)
                self._sent.discard(call_id)
            raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                              f"{method}: no reply from {self.address} within {timeout} s") from None

    def call_future(self, method: str, payload: bytes = b"", *, timeout: Optional[float] = None,
                    metadata: Optional[Mapping[str, str]] = None) -> "Future[bytes]":
        """Sends one call; returns a Future of its reply payload (or LarderError).

        The timeout bounds the sending (DEADLINE_EXCEEDED, raised here) and is sent to
        the server; the reply is not waited for here: bound that wait with
        future.result(timeout) if the server may not answer at all.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        return self._start(method, payload, timeout, metadata, deadline)[1]

    @property
    def closed(self) -> Optional[LarderError]:
        """Why the connection is closed (the error its calls failed with), or None while it is open."""
        with self._lock:
            return self._closed

    def close(self) -> None:
        """Closes the connection; pending calls fail with UNAVAILABLE."""
        self._fail_all(LarderError(StatusCode.UNAVAILABLE, f"connection to {self.address} closed by the client"))
        if self._reader is not threading.current_thread():
            self._reader.join(5.0)

    def shut_down_from_finalizer(self) -> None:
        """For a client's __del__, which may run in any thread (the reader's included, while it
        holds the lock): takes no lock, only shuts the socket down; the reader thread then
        reads the end and fails what is pending itself."""
        if self._closed is None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def abandon_after_fork(self) -> None:
        """In a child process after fork(): gives the parent's connection up without touching it.

        The child shares the socket and the call ids with the parent, and has no reader
        thread: it must not send or read on it. Closing the child's descriptor (no
        shutdown, no TLS close_notify) leaves the parent's connection as it was."""
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending = {}
        self._sent = set()
        self._closed = LarderError(StatusCode.UNAVAILABLE,
                                   f"connection to {self.address} belongs to the parent process (fork)")
        self._sock.close()

    def _start(self, method: str, payload: bytes, timeout: Optional[float],
               metadata: Optional[Mapping[str, str]], deadline: Optional[float]) -> tuple[int, Future[bytes]]:
        future: Future[bytes] = Future()
        with self._lock:
            if self._closed is not None:
                raise NotSent(StatusCode.UNAVAILABLE, f"connection to {self.address} is closed ({self._closed})")
            call_id, self._next_id = self._next_id, self._next_id + 1
        frame = encode_request(call_id, method, payload, timeout, metadata)
        check_request_size(method, frame, self._max_frame_bytes)
        with self._lock:
            if self._closed is not None:
                raise NotSent(StatusCode.UNAVAILABLE, f"connection to {self.address} is closed ({self._closed})")
            self._pending[call_id] = future  # before sending: the reply may beat us back
        try:
            self._send(method, frame, timeout, deadline, call_id)
        except (OSError, ValueError, ssl.SSLError) as e:  # ValueError: select on a socket closed meanwhile
            self._reader.join(1.0)  # the reader usually learns why (call_id 0, EOF): let it speak first
            self._fail_all(LarderError(StatusCode.UNAVAILABLE, f"sending to {self.address} failed: {e}"))
        except BaseException:
            with self._lock:
                self._pending.pop(call_id, None)
                self._sent.discard(call_id)
            raise
        return call_id, future

    def _send(self, method: str, frame: bytes, timeout: Optional[float], deadline: Optional[float],
              call_id: int) -> None:
        """Writes one whole frame by `deadline`; raises DEADLINE_EXCEEDED when it cannot.

        Waiting for the write lock and for room in the socket both count against the
        deadline. A frame not started leaves the connection as it was; one cut off part way
        (deadline, KeyboardInterrupt) closes it, failing the other pending calls UNAVAILABLE."""
        wait = -1.0 if deadline is None else deadline - time.monotonic()
        if deadline is not None and wait <= 0:
            raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                              f"{method}: the timeout of {timeout} s passed before the request could be sent")
        if not self._write_lock.acquire(timeout=wait):
            raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                              f"{method}: not sent to {self.address} within {timeout} s: other calls' requests "
                              "were still being written (is the server reading?)")
        sent = 0
        # Whether the connection may hold part of the frame (or, with TLS, its session be past
        # records not sent). Set before each send: an interrupt can arrive after the kernel
        # took bytes and before their count is known.
        started = False
        with self._lock:
            self._sent.add(call_id)  # from here on, some of it may reach the server
        try:
            data = memoryview(self.tls.encrypt(frame) if self.tls is not None else frame)
            started = self.tls is not None
            while sent < len(data):
                try:
                    started = True
                    sent += self._sock.send(data[sent:], socket.MSG_DONTWAIT)
                    continue
                except BlockingIOError:
                    started = sent > 0 or self.tls is not None
                wait = -1.0 if deadline is None else deadline - time.monotonic()
                if deadline is not None and wait <= 0:
                    raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                                      f"{method}: request not written to {self.address} within {timeout} s "
                                      f"({sent} of {len(data)} bytes; is the server reading?)")
                _wait_writable(self._sock, None if deadline is None else wait)
        except BaseException as e:
            if started:
                self._fail_all(LarderError(StatusCode.UNAVAILABLE,
                                           f"connection to {self.address} closed: a request was cut off after "
                                           f"{sent} bytes ({type(e).__name__}: {e})"))
            raise
        finally:
            self._write_lock.release()

    def _read_loop(self) -> None:
        reason = LarderError(StatusCode.UNAVAILABLE, f"connection to {self.address} closed by the server")
        stream = TLSStream(self.tls) if self.tls is not None else self._sock.makefile("rb")
        first = True
        # False once the reason is what the server or a foreign peer said of the connection.
        lost = True
        try:
            while True:
                header = stream.read(HEADER.size)
                if len(header) < HEADER.size:
                    break  # EOF
                (size,) = HEADER.unpack(header)
                foreign = foreign_reply_error(self.address, header, tls=self.tls is not None)
                if foreign is not None:
                    reason, lost = foreign, False
                    break
                if size > self._max_frame_bytes:
                    reason = LarderError(StatusCode.RESOURCE_EXHAUSTED,
                                         f"reply frame of {size} bytes exceeds {self._max_frame_bytes}")
                    lost = False
                    break
                body = b""
                if first and may_be_h2_settings(header):
                    body = stream.read(min(size, H2_SETTINGS_PEEK))
                    foreign = h2_settings_error(self.address, body, min(size, H2_SETTINGS_PEEK))
                    if foreign is not None:
                        reason, lost = foreign, False
                        break
                first = False
                body += stream.read(size - len(body))
                if len(body) < size:
                    break  # EOF inside a frame
                env = ResponseEnvelope.FromString(body)
                error = LarderError(env.status_code, env.status_message) if env.status_code else None
                if env.call_id == 0:  # connection-level error; the server closes next
                    reason, lost = error or reason, error is None
                    break
                with self._lock:
                    future = self._pending.pop(env.call_id, None)
                    self._sent.discard(env.call_id)
                if future is not None:  # None: timed out locally, drop the late reply
                    _settle(future, error, env.payload)
        except (OSError, ValueError, DecodeError, ssl.SSLError) as e:  # ValueError: read on a closed file
            reason = LarderError(StatusCode.UNAVAILABLE, f"connection to {self.address} lost: {e}")
        finally:
            self._fail_all(reason, telling_delivery=lost)
            stream.close()

    def _fail_all(self, reason: LarderError, telling_delivery: bool = True) -> None:
        """Closes the connection once; the first reason wins for every pending call. With
        `telling_delivery` (the connection broke or closed under them, not a status the server
        sent for it), each pending call's error says whether its request was sent."""
        with self._lock:
            first = self._closed is None
            if first:
                self._closed = reason
            pending, self._pending, first_reason = self._pending, {}, self._closed or reason
            sent, self._sent = self._sent, set()
        for call_id, future in pending.items():
            told = with_delivery(first_reason, call_id in sent) if first and telling_delivery else first_reason
            _settle(future, told, b"")
        if first:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)  # wakes the reader
            except OSError:
                pass
            self._sock.close()


#: The longest single wait in `_wait_writable`: Python runs a signal's handler only when a wait
#: returns, so a Ctrl-C that lands just before one begins is seen within this.
_SIGNAL_CHECK_SECONDS = 1.0


def _wait_writable(sock: socket.socket, timeout: Optional[float]) -> None:
    """Waits until `sock` takes more bytes (or fails), at most `timeout` seconds (None: no limit).

    poll(), where there is one: select() refuses descriptors past 1023, which a busy
    process (a load generator) reaches. In slices of at most a second: a SIGINT that arrived
    between Python's last signal check and the wait left an unbounded wait blocked for good
    (a test that interrupts a stalled send hung the suite)."""
    deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
    poller = None
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLOUT)
    while True:
        wait = _SIGNAL_CHECK_SECONDS if deadline is None else min(_SIGNAL_CHECK_SECONDS,
                                                                   max(0.0, deadline - time.monotonic()))
        if poller is not None:
            ready = bool(poller.poll(math.ceil(wait * 1000)))
        else:
            ready = bool(select.select([], [sock], [], wait)[1])
        if ready or (deadline is not None and time.monotonic() >= deadline):
            return


def _settle(future: Future[bytes], error: Optional[LarderError], payload: bytes) -> None:
    try:
        if error:
            future.set_exception(error)
        else:
            future.set_result(payload)
    except InvalidStateError:
        pass  # the caller cancelled it
