"""TLS for the lean protocol (docs/PROTOCOL.md section 1): contexts and a thread-safe channel.

    ctx = larder_client.tls_context(cafile="ca.pem")      # None: the system trust store
    client = LarderClient("larder.example.com:7411", tls=ctx)

The server tells TLS from cleartext by the first byte on the port; ALPN `larder` asks for
the lean protocol (`h2` is gRPC over HTTP/2).

Sync connections read in one thread while others write; an ssl.SSLSocket must not be used
from two threads at once, so `TLSChannel` drives an ssl.SSLObject over memory BIOs: the
object is behind a short lock, socket I/O outside it, and records are written in the order
they were made (senders encrypt and write under the connection's write lock).
"""
from __future__ import annotations

import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Optional

from .status import LarderError, StatusCode

ALPN = "larder"


def tls_context(cafile: Optional[str] = None, *, certfile: Optional[str] = None, keyfile: Optional[str] = None,
                insecure_skip_verify: bool = False) -> ssl.SSLContext:
    """A client context: verifies the server against cafile (else the system trust store) and its
    name, TLS 1.2 or later, ALPN `larder`; certfile/keyfile: a client certificate, when the
    server asks for one. insecure_skip_verify accepts any certificate (never a default)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols([ALPN])
    if certfile:
        context.load_cert_chain(certfile, keyfile)
    if insecure_skip_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def handshake_error(address: str, error: BaseException) -> LarderError:
    """The error a failed handshake raises: UNAVAILABLE, with what the certificate check said."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return LarderError(StatusCode.UNAVAILABLE,
                           f"TLS handshake with {address} failed: {error.verify_message} "
                           "(pass the CA that issued the server's certificate, or the name it lists)")
    if isinstance(error, ssl.SSLError) and error.reason == "WRONG_VERSION_NUMBER":
        return LarderError(StatusCode.UNAVAILABLE,
                           f"TLS handshake with {address} failed: the server did not answer with TLS: is it serving "
                           f"TLS on this port (larder-server --tls-cert)? ({error})")
    return LarderError(StatusCode.UNAVAILABLE, f"TLS handshake with {address} failed: {error}")


@dataclass(frozen=True)
class TLSInfo:
    """What the asyncio client's TLS session negotiated (the sync client's TLSChannel has the same)."""

    version: Optional[str]
    alpn: Optional[str]


class TLSChannel:
    """One TLS session over a blocking socket, shared by a reader thread and writers."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, server_hostname: str, address: str,
                 timeout: float, *, deadline: Optional[float] = None) -> None:
        """Runs the handshake; raises LarderError(UNAVAILABLE) when it fails or is not complete
        by `deadline` (time.monotonic(); default `timeout` seconds from now). `timeout` is the
        limit the error names: the whole handshake must finish within it, however slowly the
        peer sends (a per-read timeout would let one byte a second keep it going for hours)."""
        self._sock = sock
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._object = context.wrap_bio(self._incoming, self._outgoing, server_hostname=server_hostname)
        self._lock = threading.Lock()
        self._peer_closed = False  # the server sent close_notify: its output has ended
        self._deadline = time.monotonic() + timeout if deadline is None else deadline
        self._address, self._limit = address, timeout
        try:
            while True:
                try:
                    self._object.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    self._set_handshake_timeout()
                    self._send_pending()
                    self._set_handshake_timeout()
                    data = sock.recv(65536)
                    if not data:
                        raise LarderError(StatusCode.UNAVAILABLE,
                                          f"TLS handshake with {address} failed: the server closed the connection")
                    self._incoming.write(data)
            self._set_handshake_timeout()
            self._send_pending()
        except ssl.SSLError as e:
            self._send_pending_quietly()
            raise handshake_error(address, e) from None
        except socket.timeout:
            raise self._too_slow() from None
        except OSError as e:
            raise LarderError(StatusCode.UNAVAILABLE, f"TLS handshake with {address} failed: {e}") from None
        finally:
            sock.settimeout(None)
        self.alpn = self._object.selected_alpn_protocol()
        self.version = self._object.version()

    def _too_slow(self) -> LarderError:
        return LarderError(StatusCode.UNAVAILABLE,
                           f"TLS handshake with {self._address} did not complete within {self._limit:g} s "
                           "(the connection attempt's limit: connect_timeout, or the call's timeout if shorter)")

    def _set_handshake_timeout(self) -> None:
        """The socket's timeout for the next handshake read or write: the time left, or
        the handshake's error when none is."""
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise self._too_slow()
        self._sock.settimeout(left)

    def _send_pending(self) -> None:
        data = self._outgoing.read()
        if data:
            self._sock.sendall(data)

    def _send_pending_quietly(self) -> None:
        try:
            self._send_pending()
        except OSError:
            pass

    def encrypt(self, plaintext: bytes) -> bytes:
        """The TLS records of `plaintext`, to be written whole and in order: the caller holds
        the connection's write lock until they are sent."""
        with self._lock:
            self._object.write(plaintext)
            return self._outgoing.read()

    def recv(self) -> bytes:
        """The next plaintext (b"" at the end of the connection); from the reader thread only.

        Records already received (with the handshake's last bytes) are read before the socket.
        The server's close_notify ends its output (docs/PROTOCOL.md section 1) even when it
        leaves TCP open: the plaintext before it is returned, then b"" without reading on."""
        while True:
            chunks = []
            with self._lock:
                while not self._peer_closed:
                    try:
                        chunk = self._object.read(65536)
                    except ssl.SSLWantReadError:
                        break
                    except ssl.SSLZeroReturnError:
                        self._peer_closed = True
                        break
                    if not chunk:  # CPython's read returns b"" for a close_notify (else the error above)
                        self._peer_closed = True
                        break
                    chunks.append(chunk)
            if chunks:
                return b"".join(chunks)
            if self._peer_closed:
                return b""
            data = self._sock.recv(65536)
            if not data:
                return b""
            with self._lock:
                self._incoming.write(data)


class TLSStream:
    """The reader's view of a TLSChannel: read(n) returns n bytes, or fewer at the end."""

    def __init__(self, channel: TLSChannel) -> None:
        self._channel = channel
        self._buffer = bytearray()
        self._eof = False

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and not self._eof:
            data = self._channel.recv()
            if data:
                self._buffer += data
            else:
                self._eof = True
        out = bytes(self._buffer[:size])
        del self._buffer[:size]
        return out

    def close(self) -> None:
        pass
