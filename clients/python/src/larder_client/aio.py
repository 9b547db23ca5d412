"""The Larder wire protocol on asyncio: the same rules as transport.Connection."""
from __future__ import annotations

import asyncio
import ssl
import time
from typing import Mapping, Optional

from google.protobuf.message import DecodeError

from ._gen.larder.rpc.v1.envelope_pb2 import ResponseEnvelope
from .status import LarderError, StatusCode
from .tls import TLSInfo, handshake_error
from .transport import (DEFAULT_MAX_FRAME_BYTES, H2_SETTINGS_PEEK, HEADER, NotSent, check_request_size, encode_request,
                        foreign_reply_error, h2_settings_error, may_be_h2_settings, with_delivery)


class AsyncConnection:
    """One connection carrying many concurrent calls from one event loop."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, address: str,
                 max_frame_bytes: int) -> None:
        self.address = address
        self._reader, self._writer = reader, writer
        self._max_frame_bytes = max_frame_bytes
        self._pending: dict[int, asyncio.Future[bytes]] = {}
        self._sent: set[int] = set()  # pending calls whose request was handed to the transport
        self._next_id = 1
        self._closed: Optional[LarderError] = None
        self._write_lock = asyncio.Lock()
        ssl_object = writer.get_extra_info("ssl_object")
        #: The TLS session's version and ALPN protocol, or None in cleartext.
        self.tls: Optional[TLSInfo] = (TLSInfo(version=ssl_object.version(), alpn=ssl_object.selected_alpn_protocol())
                                       if ssl_object is not None else None)
        self._read_task = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def connect(cls, host: str, port: int, *, connect_timeout: float = 10.0,
                      max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, tls: Optional[ssl.SSLContext] = None,
                      server_hostname: Optional[str] = None) -> "AsyncConnection":
        """Opens a connection (TLS with `tls`: see larder_client.tls_context); raises
        LarderError(UNAVAILABLE) when it cannot."""
        try:
            opening = (asyncio.open_connection(host, port) if tls is None else
                       asyncio.open_connection(host, port, ssl=tls, server_hostname=server_hostname or host))
            reader, writer = await asyncio.wait_for(opening, connect_timeout)
        except ssl.SSLError as e:
            raise handshake_error(f"{host}:{port}", e) from None
        except (OSError, asyncio.TimeoutError) as e:
            raise LarderError(StatusCode.UNAVAILABLE, f"cannot connect to {host}:{port}: {e!r}") from None
        return cls(reader, writer, f"{host}:{port}", max_frame_bytes)

    async def call(self, method: str, payload: bytes = b"", *, timeout: Optional[float] = None,
                   metadata: Optional[Mapping[str, str]] = None) -> bytes:
        """Sends one call and awaits its reply payload; raises LarderError.

        The timeout bounds the whole call: waiting for other calls' writes, for the
        socket to take the request, and for the reply (DEADLINE_EXCEEDED)."""
        if self._closed is not None:
            raise NotSent(StatusCode.UNAVAILABLE, f"connection to {self.address} is closed ({self._closed})")
        deadline = None if timeout is None else time.monotonic() + timeout
        call_id, self._next_id = self._next_id, self._next_id + 1
        frame = encode_request(call_id, method, payload, timeout, metadata)
        check_request_size(method, frame, self._max_frame_bytes)
        future = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        try:
            try:
                # The frame is handed to the transport whole, so a timeout here never cuts one off.
                await asyncio.wait_for(self._write(frame, call_id), timeout)
            except asyncio.TimeoutError:
                raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                                  f"{method}: request not taken by {self.address} within {timeout} s "
                                  "(is the server reading?)") from None
            except OSError as e:
                await asyncio.wait({self._read_task}, timeout=1.0)  # let the reader tell why
                self._fail_all(LarderError(StatusCode.UNAVAILABLE, f"sending to {self.address} failed: {e}"))
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            return await asyncio.wait_for(future, remaining)
        except asyncio.TimeoutError:
            raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                              f"{method}: no reply from {self.address} within {timeout} s") from None
        finally:
            self._pending.pop(call_id, None)
            self._sent.discard(call_id)

    async def _write(self, frame: bytes, call_id: int) -> None:
        """Writes one frame after the ones before it, and waits until the socket took it."""
        async with self._write_lock:
            # Lost before the reader task told the calls: say so as the OSError it is (CPython's
            # TLS transport raises AttributeError on a write once closed twice).
            if self._writer.is_closing():
                raise ConnectionResetError(f"the connection to {self.address} is closed")
            self._sent.add(call_id)
            self._writer.write(frame)
            await self._writer.drain()

    @property
    def closed(self) -> Optional[LarderError]:
        """Why the connection is closed (the error its calls failed with), or None while it is open."""
        return self._closed

    async def close(self) -> None:
        """Closes the connection; pending calls fail with UNAVAILABLE."""
        self.close_nowait()
        await asyncio.wait({self._read_task}, timeout=5.0)

    def close_nowait(self) -> None:
        """Closes the connection without waiting for its reader task to end: from any thread
        (handed to the connection's event loop when called from another), and a no-op once
        that loop has closed (the transport's own finalizer closes the socket)."""
        loop = self._read_task.get_loop()
        if loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        reason = LarderError(StatusCode.UNAVAILABLE, f"connection to {self.address} closed by the client")
        try:
            if running is loop:
                self._fail_all(reason)
            else:
                loop.call_soon_threadsafe(self._fail_all, reason)
        except RuntimeError:  # the loop closed meanwhile
            pass

    async def _read_loop(self) -> None:
        reason = LarderError(StatusCode.UNAVAILABLE, f"connection to {self.address} closed by the server")
        first = True
        # False once the reason is what the server or a foreign peer said of the connection.
        lost = True
        try:
            while True:
                header = await self._reader.readexactly(HEADER.size)
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
                    body = await self._reader.readexactly(min(size, H2_SETTINGS_PEEK))
                    foreign = h2_settings_error(self.address, body, len(body))
                    if foreign is not None:
                        reason, lost = foreign, False
                        break
                first = False
                env = ResponseEnvelope.FromString(body + await self._reader.readexactly(size - len(body)))
                error = LarderError(env.status_code, env.status_message) if env.status_code else None
                if env.call_id == 0:
                    reason, lost = error or reason, error is None
                    break
                future = self._pending.pop(env.call_id, None)
                if future is not None and not future.done():
                    if error:
                        future.set_exception(error)
                    else:
                        future.set_result(env.payload)
        except asyncio.IncompleteReadError:
            pass  # EOF
        except (OSError, DecodeError) as e:
            reason = LarderError(StatusCode.UNAVAILABLE, f"connection to {self.address} lost: {e}")
        finally:
            self._fail_all(reason, telling_delivery=lost)

    def _fail_all(self, reason: LarderError, telling_delivery: bool = True) -> None:
        """Closes the connection once; the first reason wins for every pending call. With
        `telling_delivery` (the connection broke or closed under them, not a status the server
        sent for it), each pending call's error says whether its request was sent."""
        first = self._closed is None
        if first:
            self._closed = reason
            self._writer.close()
        closed = self._closed or reason
        pending, self._pending = self._pending, {}
        sent, self._sent = self._sent, set()
        for call_id, future in pending.items():
            if not future.done():
                future.set_exception(with_delivery(closed, call_id in sent) if first and telling_delivery else closed)
