"""LarderClient and AsyncLarderClient: a typed method for every RPC, plus a generic call().

Both reconnect: when the connection has dropped (the server's idle timeout, a
restart, a network failure), the next call opens a new one. Failed connection
attempts are spaced by a bounded exponential backoff with jitter; a call made
while the client waits for its next attempt fails at once with UNAVAILABLE. A
call that was already sent when the connection dropped fails with UNAVAILABLE
and is never sent again (it may or may not have run on the server).
"""
from __future__ import annotations

import asyncio
import ipaddress
import math
import numbers
import os
import ssl
import threading
import time
import warnings
import weakref
from concurrent.futures import Future, InvalidStateError
from types import TracebackType
from typing import Any, Mapping, Optional, Tuple, TypeVar, Union, cast

from google.protobuf.message import DecodeError, Message

from ._gen.api import AsyncMethods, Methods
from .aio import AsyncConnection
from .backoff import Backoff
from .methods import METHODS
from .rpc import DEFAULT, Call, Metadata, Timeout
from .status import LarderError, StatusCode
from .tls import tls_context
from .transport import DEFAULT_MAX_FRAME_BYTES, Connection, NotSent

DEFAULT_ADDRESS = "127.0.0.1:7411"
#: The longest timeout a request can carry (timeout_ms is a uint32): about 49.7 days.
MAX_TIMEOUT = 0xFFFFFFFF / 1000
Address = Union[str, Tuple[str, int]]
R = TypeVar("R", bound=Message)


def parse_address(address: Optional[Address] = None) -> Tuple[str, int]:
    """'host:port', '[::1]:port' or (host, port); None = $LARDER_SERVER or 127.0.0.1:7411."""
    address = address or os.environ.get("LARDER_SERVER") or DEFAULT_ADDRESS
    if isinstance(address, tuple):
        host, port_number = address[0], int(address[1])
    else:
        host, sep, port = address.rpartition(":")
        if not sep or not port.isascii() or not port.isdigit():
            raise ValueError(f"server address {address!r} is not HOST:PORT")
        host, port_number = host.strip("[]") or "127.0.0.1", int(port)
    # getaddrinfo would keep the low 16 bits of a larger number: another server's port.
    if not 1 <= port_number <= 65535:
        raise ValueError(f"server address {address!r} has an invalid port {port_number} (1-65535)")
    return host, port_number


_SWITCH = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _environment_switch(name: str) -> bool:
    value = os.environ.get(name, "")
    if not value:
        return False
    if value.lower() not in _SWITCH:
        raise ValueError(f"${name} must be 1/true/yes/on or 0/false/no/off, got {value!r}")
    return _SWITCH[value.lower()]


def tls_from_environment() -> Optional[ssl.SSLContext]:
    """The TLS context the CLI's variables ask for, as `larder` reads them: $LARDER_TLS turns TLS
    on, with $LARDER_CA, $LARDER_CERT/$LARDER_KEY and $LARDER_INSECURE_SKIP_VERIFY
    ($LARDER_SERVER_NAME is the name to verify); None when $LARDER_TLS is unset, empty or off."""
    if not _environment_switch("LARDER_TLS"):
        return None
    return tls_context(os.environ.get("LARDER_CA") or None, certfile=os.environ.get("LARDER_CERT") or None,
                       keyfile=os.environ.get("LARDER_KEY") or None,
                       insecure_skip_verify=_environment_switch("LARDER_INSECURE_SKIP_VERIFY"))


def _token_from_file(path: Optional[str]) -> Optional[str]:
    """The token in $LARDER_TOKEN_FILE, as `larder --token-file` reads it (one newline stripped)."""
    if not path:
        return None
    with open(path, encoding="utf-8") as file:
        return file.read().removesuffix("\n").removesuffix("\r") or None


def is_loopback(host: str) -> bool:
    """True for localhost, *.localhost, an address in 127.0.0.0/8 and ::1 (the name as written:
    127.example.com is a name, not an address)."""
    name = host.lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class _ClientBase:
    """Options, metadata and the reconnect bookkeeping shared by both clients."""

    def _setup(self, address: Optional[Address], token: Optional[str], timeout: Optional[float],
               metadata: Optional[Mapping[str, str]], connect_timeout: float, max_frame_bytes: int,
               backoff: Optional[Backoff], tls: Optional[ssl.SSLContext] = None,
               server_hostname: Optional[str] = None) -> None:
        self.host, self.port = parse_address(address)
        if tls is None:
            tls = tls_from_environment()
            if tls is not None and server_hostname is None:
                server_hostname = os.environ.get("LARDER_SERVER_NAME") or None
        #: TLS context (larder_client.tls_context) and the name the certificate must match.
        self.tls = tls
        self.server_hostname = server_hostname
        self.address = f"{self.host}:{self.port}"
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_frame_bytes = max_frame_bytes
        self.metadata: dict[str, str] = {k.lower(): v for k, v in (metadata or {}).items()}
        if token is None:
            token = os.environ.get("LARDER_TOKEN") or _token_from_file(os.environ.get("LARDER_TOKEN_FILE"))
        if token:
            self.metadata["authorization"] = f"Bearer {token}"
            if tls is None and not is_loopback(self.host):
                warnings.warn(f"larder_client: the token goes to {self.address} in clear text (no TLS): anyone on "
                              "the path can read it and the data; pass tls=larder_client.tls_context(...) or set "
                              "LARDER_TLS=1", stacklevel=3)
        self.backoff = backoff or Backoff()
        #: Connections opened so far (1 after the first connect, +1 per reconnect).
        self.connects = 0
        self._retry_at = 0.0                      # monotonic time of the next allowed attempt
        self._last_failure: Optional[LarderError] = None
        self._client_closed = False
        _LIVE_CLIENTS.add(self)

    def _forget_after_fork(self) -> None:
        """Drops the parent's connection in a child process (see _after_fork_in_child)."""

    @property
    def _larder_client(self) -> _ClientBase:
        return self

    def _before_attempt(self) -> None:
        """Refuses an attempt while the backoff after the last failed one runs (caller holds the lock)."""
        if self._client_closed:
            raise LarderError(StatusCode.UNAVAILABLE, f"client for {self.address} is closed")
        wait = self._retry_at - time.monotonic()
        if wait > 0 and self._last_failure is not None:
            raise LarderError(StatusCode.UNAVAILABLE, f"{self._last_failure.message}; "
                                                      f"next connection attempt in {wait:.2f} s")

    def _connect_limit(self, timeout: Optional[float]) -> float:
        return self.connect_timeout if timeout is None else max(0.001, min(self.connect_timeout, timeout))

    def _after_attempt(self, error: Optional[LarderError]) -> None:
        if error is None:
            self.backoff.reset()
            self._last_failure = None
            self.connects += 1
        else:
            self._last_failure = error
            self._retry_at = time.monotonic() + self.backoff.next_delay()

    def _prepare(self, method: str, request: Union[Message, bytes], timeout: Timeout,
                 metadata: Optional[Mapping[str, str]]) -> tuple[str, bytes, Optional[float], dict[str, str]]:
        """The call's path, payload, timeout and metadata, checked before anything is sent.

        TypeError/ValueError for a request, timeout or metadata of the wrong kind; a timeout
        of 0 or less is DEADLINE_EXCEEDED at once (the call is not sent)."""
        path = "/" + method.lstrip("/")
        if isinstance(request, (bytes, bytearray)):
            payload = bytes(request)
        elif isinstance(request, Message):
            payload = request.SerializeToString()
        else:
            raise TypeError(f"{path}: the request must be a protobuf message or bytes, got {type(request).__name__}")
        merged = {**self.metadata, **{k.lower() if isinstance(k, str) else k: v for k, v in (metadata or {}).items()}}
        for key, value in merged.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(f"{path}: metadata keys and values must be str, got {key!r}: {value!r}")
        given: object = self.timeout if isinstance(timeout, type(DEFAULT)) else timeout
        resolved: Optional[float] = None
        if given is not None:
            if isinstance(given, bool) or not isinstance(given, numbers.Real):
                raise TypeError(f"{path}: timeout must be a number of seconds or None, got {given!r}")
            resolved = float(given)
            if not math.isfinite(resolved) or resolved > MAX_TIMEOUT:
                raise ValueError(f"{path}: timeout must be finite and at most {MAX_TIMEOUT} s (None: no timeout), "
                                 f"got {resolved!r}")
            if resolved <= 0:
                raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                                  f"{path}: the timeout ({resolved} s) had passed before the call was sent")
        return path, payload, resolved, merged

    @staticmethod
    def _deadline(seconds: Optional[float]) -> Optional[float]:
        """When the call's timeout runs out (time.monotonic()), or None for no timeout."""
        return None if seconds is None else time.monotonic() + seconds

    @staticmethod
    def _left(path: str, seconds: Optional[float], deadline: Optional[float]) -> Optional[float]:
        """What is left of the call's timeout: connecting and sending spend the same budget as
        the reply, and the server is sent only what is left. DEADLINE_EXCEEDED once it is gone."""
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                              f"{path}: the timeout ({seconds} s) ran out before the call could be sent")
        # To the millisecond (what timeout_ms carries), so that messages show a readable number.
        return max(0.001, round(left, 3))

    @staticmethod
    def _decode(path: str, payload: bytes, response_type: Optional[type[Message]]) -> Any:
        info = METHODS.get(path)
        cls = response_type or (info.response_type if info else None)
        if cls is None:
            return payload  # an unknown method: the raw reply bytes
        try:
            return cls.FromString(payload)
        except DecodeError as e:
            raise LarderError(StatusCode.INTERNAL, f"{path}: undecodable {cls.DESCRIPTOR.full_name} reply: {e}")


#: Every client not yet garbage collected, for _after_fork_in_child.
_LIVE_CLIENTS: "weakref.WeakSet[_ClientBase]" = weakref.WeakSet()
#: Connections a forked child gave up but must not close (asyncio transports of the
#: parent's loop): kept referenced so that collecting them never closes a descriptor
#: number the child has since reused.
_ABANDONED: list[object] = []


def _after_fork_in_child() -> None:
    """A child process after fork() shares each client's socket and call ids with its parent:
    two processes writing one connection interleave frames and read each other's replies
    (a get could return another call's row). The child gives every connection up instead;
    its next call opens its own."""
    for client in list(_LIVE_CLIENTS):
        client._forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class LarderClient(Methods, _ClientBase):
    """A thread-safe client; every RPC is a typed method.

    client = LarderClient("127.0.0.1:7411", token=None, timeout=5.0)
    client.location_service.list_locations()   # or client.list_locations()
    client.get_location(id=...)                # raises LarderError
    client.get_location.future(id=...)         # a concurrent.futures.Future

    Connects at once (connect=False: on the first call) and raises
    LarderError(UNAVAILABLE) when it cannot; reconnects on the next call after
    the connection dropped (see the module docstring).
    """

    def __init__(self, address: Optional[Address] = None, *, token: Optional[str] = None,
                 timeout: Optional[float] = None, metadata: Optional[Mapping[str, str]] = None,
                 connect_timeout: float = 10.0, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
                 backoff: Optional[Backoff] = None, connect: bool = True, tls: Optional[ssl.SSLContext] = None,
                 server_hostname: Optional[str] = None) -> None:
        self._setup(address, token, timeout, metadata, connect_timeout, max_frame_bytes, backoff, tls,
                    server_hostname)
        self._lock = threading.Lock()
        self._connection: Optional[Connection] = None
        self._init_services()
        if connect:
            self._connected()

    @property
    def connection(self) -> Optional[Connection]:
        """The current connection (None before the first and after a failed attempt)."""
        return self._connection

    @property
    def connected(self) -> bool:
        """True while the client holds an open connection (a call may still find it dropped)."""
        connection = self._connection
        return connection is not None and connection.closed is None

    def _connected(self, timeout: Optional[float] = None) -> Connection:
        """The open connection, or a new one when it has dropped; raises UNAVAILABLE.

        A new connection waits at most connect_timeout, and at most the call's timeout,
        also while another call's connection attempt runs (DEADLINE_EXCEEDED).
        """
        connection = self._connection
        if connection is not None and connection.closed is None:
            return connection
        if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
            raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                              f"no connection to {self.address} within {timeout} s: another call's connection "
                              "attempt was still running")
        try:
            connection = self._connection
            if connection is not None and connection.closed is None:
                return connection
            self._before_attempt()
            try:
                connection = Connection(self.host, self.port, connect_timeout=self._connect_limit(timeout),
                                        max_frame_bytes=self.max_frame_bytes, tls=self.tls,
                                        server_hostname=self.server_hostname)
            except LarderError as e:
                self._connection = None
                self._after_attempt(e)
                raise
            self._connection = connection
            self._after_attempt(None)
            return connection
        finally:
            self._lock.release()

    def _forget_after_fork(self) -> None:
        """In a child after fork(): the parent's connection is given up; the next call opens one."""
        self._lock = threading.Lock()
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.abandon_after_fork()

    def call(self, method: str, request: Union[Message, bytes] = b"", *, timeout: Timeout = DEFAULT,
             metadata: Optional[Mapping[str, str]] = None,
             response_type: Optional[type[Message]] = None) -> Any:
        """Calls a method by wire name ('/larder.v1.LocationService/GetLocation').

        Returns the decoded response for a known method (or response_type),
        else the raw reply bytes; raises LarderError.
        """
        path, payload, seconds, merged = self._prepare(method, request, timeout, metadata)
        deadline = self._deadline(seconds)
        try:
            connection = self._connected(self._left(path, seconds, deadline))
            reply = connection.call(path, payload, timeout=self._left(path, seconds, deadline), metadata=merged)
        except NotSent:  # it found the connection closed before sending: safe on a new one
            connection = self._connected(self._left(path, seconds, deadline))
            reply = connection.call(path, payload, timeout=self._left(path, seconds, deadline), metadata=merged)
        return self._decode(path, reply, response_type)

    def call_future(self, method: str, request: Union[Message, bytes] = b"", *, timeout: Timeout = DEFAULT,
                    metadata: Optional[Mapping[str, str]] = None,
                    response_type: Optional[type[Message]] = None) -> Future[Any]:
        """Like call() but returns at once with a Future; the timeout is enforced by the server."""
        path, payload, seconds, merged = self._prepare(method, request, timeout, metadata)
        deadline = self._deadline(seconds)
        try:
            connection = self._connected(self._left(path, seconds, deadline))
            raw = connection.call_future(path, payload, timeout=self._left(path, seconds, deadline), metadata=merged)
        except NotSent:
            connection = self._connected(self._left(path, seconds, deadline))
            raw = connection.call_future(path, payload, timeout=self._left(path, seconds, deadline), metadata=merged)
        result: Future[Any] = Future()

        def done(f: Future[bytes]) -> None:
            if not result.set_running_or_notify_cancel():
                return  # the caller cancelled it
            try:
                result.set_result(self._decode(path, f.result(), response_type))
            except InvalidStateError:
                pass
            except Exception as e:  # LarderError
                result.set_exception(e)

        raw.add_done_callback(done)
        return result

    def run(self, call: Call[R]) -> R:
        """Runs a typed Call (what the generated methods build); raises LarderError."""
        return cast(R, self.call(call.path, call.request, timeout=call.timeout, metadata=call.metadata,
                                 response_type=call.response_type))

    def run_future(self, call: Call[R]) -> Future[R]:
        """Starts a typed Call; returns a Future of its response."""
        return cast("Future[R]", self.call_future(call.path, call.request, timeout=call.timeout,
                                                  metadata=call.metadata, response_type=call.response_type))

    def close(self) -> None:
        """Closes the connection for good; calls still pending fail with UNAVAILABLE."""
        with self._lock:
            self._client_closed = True
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def __del__(self) -> None:
        # Like an unclosed file or socket: a ResourceWarning, and the socket and reader thread
        # given back now rather than at the server's idle timeout. A client with calls pending
        # is never collected (their futures hold it), so nothing in flight is cut here.
        connection = getattr(self, "_connection", None)
        # `_closed`, not `closed`: a finalizer may run in the reader thread while it holds the lock.
        if connection is not None and connection._closed is None:
            warnings.warn(f"unclosed LarderClient for {self.address}: call close() or use a with block",
                          ResourceWarning, source=self)
            connection.shut_down_from_finalizer()

    def __enter__(self) -> LarderClient:
        return self

    def __exit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException],
                 trace: Optional[TracebackType]) -> None:
        self.close()


class AsyncLarderClient(AsyncMethods, _ClientBase):
    """The asyncio client; methods are awaitable.

    async with AsyncLarderClient("127.0.0.1:7411", timeout=5) as client:
        location = await client.get_location(id=...)
        async for meal in client.iter_meal_records(since=...): ...

    Connects on `async with`, on `await AsyncLarderClient.connect(...)`, or on
    the first call; reconnects like LarderClient. Use it from one event loop.
    """

    def __init__(self, address: Optional[Address] = None, *, token: Optional[str] = None,
                 timeout: Optional[float] = None, metadata: Optional[Mapping[str, str]] = None,
                 connect_timeout: float = 10.0, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
                 backoff: Optional[Backoff] = None, tls: Optional[ssl.SSLContext] = None,
                 server_hostname: Optional[str] = None) -> None:
        self._setup(address, token, timeout, metadata, connect_timeout, max_frame_bytes, backoff, tls,
                    server_hostname)
        self._connection: Optional[AsyncConnection] = None
        self._connecting: Optional[asyncio.Lock] = None
        self._init_services()

    @classmethod
    async def connect(cls, address: Optional[Address] = None, *, token: Optional[str] = None,
                      timeout: Optional[float] = None, metadata: Optional[Mapping[str, str]] = None,
                      connect_timeout: float = 10.0, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
                      backoff: Optional[Backoff] = None, tls: Optional[ssl.SSLContext] = None,
                      server_hostname: Optional[str] = None) -> AsyncLarderClient:
        """A connected client; raises LarderError(UNAVAILABLE) when the server cannot be reached."""
        client = cls(address, token=token, timeout=timeout, metadata=metadata, connect_timeout=connect_timeout,
                     max_frame_bytes=max_frame_bytes, backoff=backoff, tls=tls, server_hostname=server_hostname)
        await client._connected()
        return client

    @property
    def connection(self) -> Optional[AsyncConnection]:
        """The current connection (None before the first and after a failed attempt)."""
        return self._connection

    @property
    def connected(self) -> bool:
        """True while the client holds an open connection."""
        return self._connection is not None and self._connection.closed is None

    def _forget_after_fork(self) -> None:
        """In a child after fork(): the parent's connection and lock are given up, untouched."""
        connection, self._connection = self._connection, None
        self._connecting = None
        if connection is not None:
            _ABANDONED.append(connection)

    async def _connected(self, timeout: Optional[float] = None) -> AsyncConnection:
        """The open connection, or a new one; waits for another call's attempt at most `timeout`."""
        connection = self._connection
        if connection is not None and connection.closed is None:
            return connection
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        connecting = self._connecting
        try:
            await asyncio.wait_for(connecting.acquire(), timeout)
        except asyncio.TimeoutError:
            raise LarderError(StatusCode.DEADLINE_EXCEEDED,
                              f"no connection to {self.address} within {timeout} s: another call's connection "
                              "attempt was still running") from None
        try:
            connection = self._connection
            if connection is not None and connection.closed is None:
                return connection
            self._before_attempt()
            try:
                connection = await AsyncConnection.connect(self.host, self.port,
                                                           connect_timeout=self._connect_limit(timeout),
                                                           max_frame_bytes=self.max_frame_bytes, tls=self.tls,
                                                           server_hostname=self.server_hostname)
            except LarderError as e:
                self._connection = None
                self._after_attempt(e)
                raise
            self._connection = connection
            self._after_attempt(None)
            return connection
        finally:
            connecting.release()

    async def call(self, method: str, request: Union[Message, bytes] = b"", *, timeout: Timeout = DEFAULT,
                   metadata: Optional[Mapping[str, str]] = None,
                   response_type: Optional[type[Message]] = None) -> Any:
        """Same as LarderClient.call, awaited."""
        path, payload, seconds, merged = self._prepare(method, request, timeout, metadata)
        deadline = self._deadline(seconds)
        try:
            connection = await self._connected(self._left(path, seconds, deadline))
            reply = await connection.call(path, payload, timeout=self._left(path, seconds, deadline), metadata=merged)
        except NotSent:  # it found the connection closed before sending: safe on a new one
            connection = await self._connected(self._left(path, seconds, deadline))
            reply = await connection.call(path, payload, timeout=self._left(path, seconds, deadline), metadata=merged)
        return self._decode(path, reply, response_type)

    async def run(self, call: Call[R]) -> R:
        """Runs a typed Call (what the generated methods build); raises LarderError."""
        return cast(R, await self.call(call.path, call.request, timeout=call.timeout, metadata=call.metadata,
                                       response_type=call.response_type))

    async def close(self) -> None:
        """Closes the connection for good; calls still pending fail with UNAVAILABLE."""
        self._client_closed = True
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    def __del__(self) -> None:
        # As LarderClient.__del__; the transport is closed without awaiting (its loop may be gone).
        connection = getattr(self, "_connection", None)
        if connection is not None and connection.closed is None:
            warnings.warn(f"unclosed AsyncLarderClient for {self.address}: await close() or use an async with block",
                          ResourceWarning, source=self)
            connection.close_nowait()  # on the connection's own loop, whatever thread this is

    async def __aenter__(self) -> AsyncLarderClient:
        await self._connected()
        return self

    async def __aexit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException],
                        trace: Optional[TracebackType]) -> None:
        await self.close()


__all__ = ["DEFAULT", "Address", "AsyncLarderClient", "LarderClient", "Metadata", "Timeout", "parse_address"]
