"""The Larder wire protocol on one TCP connection (the reference transport).

Frame: 4-byte unsigned big-endian length N, then N bytes of protobuf:
RequestEnvelope client->server, ResponseEnvelope server->client. Many calls
may be in flight; replies arrive in any order, matched by call_id. A reply
with call_id 0 is a connection-level error: the server closes right after it,
so every pending call fails with its status.

Threads: callers write whole frames under a write lock; one reader thread
resolves each reply's future from the dict of pending calls.
"""
from __future__ import annotations

import math
import socket
import ssl
import struct
import threading
from concurrent.futures import Future, InvalidStateError, TimeoutError as FutureTimeout
from typing import Mapping, Optional

from google.protobuf.message import DecodeError

from ._gen.larder.rpc.v1.envelope_pb2 import RequestEnvelope, ResponseEnvelope
from .status import LarderError, StatusCode
from .tls import TLSChannel, TLSStream

HEADER = struct.Struct(">I")
DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024


def encode_request(call_id: int, method: str, payload: bytes, timeout: Optional[float],
                   metadata: Optional[Mapping[str, str]]) -> bytes:
    """One framed RequestEnvelope; timeout (seconds) becomes timeout_ms, rounded up."""
    timeout_ms = 0 if timeout is None else min(0xFFFFFFFF, max(1, math.ceil(timeout * 1000)))
    body = RequestEnvelope(call_id=call_id, method=method, payload=payload, timeout_ms=timeout_ms,
                           metadata={k.lower(): v for k, v in (metadata or {}).items()}
                           ).SerializeToString()
    return HEADER.pack(len(body)) + body


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
                self.tls = TLSChannel(self._sock, tls, server_hostname or host, self.address, connect_timeout)
            except LarderError:
                self._sock.close()
                raise
        self._max_frame_bytes = max_frame_bytes
        self._lock = threading.Lock()        # guards _pending, _next_id, _closed
        self._write_lock = threading.Lock()  # whole frames, one at a time
        self._pending: dict[int, Future[bytes]] = {}
        self._next_id = 1                    # never reused: a late reply matches nothing
        self._closed: Optional[LarderError] = None
        self._reader = threading.Thread(target=self._read_loop, daemon=True, name="larder-reader")
        self._reader.start()

    def call(self, method: str, payload: bytes = b"", *, timeout: Optional[float] = None,
             metadata: Optional[Mapping[str, str]] = None) -> bytes:
        """Sends one call and waits for its reply payload; raises LarderError.

        timeout (seconds) is sent as timeout_ms and also enforced here, so the
        call fails with DEADLINE_EXCEEDED even if the server never answers.
        """
        call_id, future = self._start(method, payload, timeout, metadata)
        try:
            return future.result(timeout)
        except FutureTimeout:
            with self._lock:
                self._pending.pop(call_id, None)
            raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                              f"{method}: no reply from {self.address} within {timeout} s") from None

    def call_future(self, method: str, payload: bytes = b"", *, timeout: Optional[float] = None,
                    metadata: Optional[Mapping[str, str]] = None) -> "Future[bytes]":
        """Sends one call; returns a Future of its reply payload (or LarderError).

        The timeout is only sent to the server: bound the wait with
        future.result(timeout) if the server may not answer at all.
        """
        return self._start(method, payload, timeout, metadata)[1]

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

    def _start(self, method: str, payload: bytes, timeout: Optional[float],
               metadata: Optional[Mapping[str, str]]) -> tuple[int, Future[bytes]]:
        future: Future[bytes] = Future()
        with self._lock:
            if self._closed is not None:
                raise NotSent(StatusCode.UNAVAILABLE, f"connection to {self.address} is closed ({self._closed})")
            call_id, self._next_id = self._next_id, self._next_id + 1
            self._pending[call_id] = future  # before sending: the reply may beat us back
        frame = encode_request(call_id, method, payload, timeout, metadata)
        try:
            with self._write_lock:
                if self.tls is not None:
                    self.tls.sendall(frame)
                else:
                    self._sock.sendall(frame)
        except (OSError, ssl.SSLError) as e:
            self._reader.join(1.0)  # the reader usually learns why (call_id 0, EOF): let it speak first
            self._fail_all(LarderError(StatusCode.UNAVAILABLE, f"sending to {self.address} failed: {e}"))
        return call_id, future

    def _read_loop(self) -> None:
        reason = LarderError(StatusCode.UNAVAILABLE, f"connection to {self.address} closed by the server")
        stream = TLSStream(self.tls) if self.tls is not None else self._sock.makefile("rb")
        try:
            while True:
                header = stream.read(HEADER.size)
                if len(header) < HEADER.size:
                    break  # EOF
                (size,) = HEADER.unpack(header)
                if size > self._max_frame_bytes:
                    reason = LarderError(StatusCode.RESOURCE_EXHAUSTED,
                                         f"reply frame of {size} bytes exceeds {self._max_frame_bytes}")
                    break
                body = stream.read(size)
                if len(body) < size:
                    break  # EOF inside a frame
                env = ResponseEnvelope.FromString(body)
                error = LarderError(env.status_code, env.status_message) if env.status_code else None
                if env.call_id == 0:  # connection-level error; the server closes next
                    reason = error or reason
                    break
                with self._lock:
                    future = self._pending.pop(env.call_id, None)
                if future is not None:  # None: timed out locally, drop the late reply
                    _settle(future, error, env.payload)
        except (OSError, ValueError, DecodeError, ssl.SSLError) as e:  # ValueError: read on a closed file
            reason = LarderError(StatusCode.UNAVAILABLE, f"connection to {self.address} lost: {e}")
        finally:
            self._fail_all(reason)
            stream.close()

    def _fail_all(self, reason: LarderError) -> None:
        """Closes the connection once; the first reason wins for every pending call."""
        with self._lock:
            first = self._closed is None
            if first:
                self._closed = reason
            pending, self._pending, first_reason = self._pending, {}, self._closed
        for future in pending.values():
            _settle(future, first_reason, b"")
        if first:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)  # wakes the reader
            except OSError:
                pass
            self._sock.close()


def _settle(future: Future[bytes], error: Optional[LarderError], payload: bytes) -> None:
    try:
        if error:
            future.set_exception(error)
        else:
            future.set_result(payload)
    except InvalidStateError:
        pass  # the caller cancelled it
