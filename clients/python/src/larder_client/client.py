"""LarderClient and AsyncLarderClient: a typed method for every RPC, plus a generic call()."""
from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import Future
from typing import Any, Dict, Mapping, Optional, Tuple, Type, Union

from google.protobuf.message import DecodeError, Message

from .aio import AsyncConnection
from .methods import METHODS, SERVICES, MethodInfo, snake_case
from .status import LarderError, StatusCode
from .transport import DEFAULT_MAX_FRAME_BYTES, Connection

DEFAULT_ADDRESS = "127.0.0.1:7411"
Address = Union[str, Tuple[str, int]]


class _Default:
    def __repr__(self) -> str:
        return "<client default>"


#: Use the client's default timeout (LarderClient(timeout=...)).
DEFAULT = _Default()


def parse_address(address: Optional[Address] = None) -> Tuple[str, int]:
    """'host:port', '[::1]:port' or (host, port); None = $LARDER_SERVER or 127.0.0.1:7411."""
    address = address or os.environ.get("LARDER_SERVER") or DEFAULT_ADDRESS
    if isinstance(address, tuple):
        return address[0], int(address[1])
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"server address {address!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


class RpcMethod:
    """One RPC bound to a client.

    Call it with a request message, a dict, or the request's fields as keyword
    arguments, plus the call options timeout= (seconds) and metadata= (dict).
    Returns the response message (a coroutine of it on AsyncLarderClient) and
    raises LarderError.
    """

    def __init__(self, client: "_ClientBase", info: MethodInfo) -> None:
        self._client = client
        self.info = info
        self.__name__ = info.python_name
        self.__doc__ = (f"{info.path}: {info.request_type.DESCRIPTOR.full_name} -> "
                        f"{info.response_type.DESCRIPTOR.full_name}\n\n{RpcMethod.__doc__}")

    def __call__(self, request: Any = None, /, *, timeout: Any = DEFAULT,
                 metadata: Optional[Mapping[str, str]] = None, **fields: Any) -> Any:
        return self._client.call(self.info.path, self.request(request, **fields),
                                 timeout=timeout, metadata=metadata)

    def future(self, request: Any = None, /, *, timeout: Any = DEFAULT,
               metadata: Optional[Mapping[str, str]] = None, **fields: Any) -> "Future[Message]":
        """Starts the call without waiting (LarderClient only); returns a Future of the response."""
        if not isinstance(self._client, LarderClient):
            raise TypeError("future() is for LarderClient; with AsyncLarderClient, await the call")
        return self._client.call_future(self.info.path, self.request(request, **fields),
                                        timeout=timeout, metadata=metadata)

    def request(self, request: Any = None, /, **fields: Any) -> Message:
        """Builds the request message from a message, a dict or keyword arguments."""
        cls = self.info.request_type
        if request is None:
            return cls(**fields)
        if fields:
            raise TypeError(f"{self.__name__}() takes a request or keyword fields, not both")
        if isinstance(request, Mapping):
            return cls(**request)
        if isinstance(request, cls):
            return request
        raise TypeError(f"{self.__name__}() takes a {cls.DESCRIPTOR.full_name}, "
                        f"got {type(request).__name__}")

    def __repr__(self) -> str:
        return f"<RpcMethod {self.info.path}>"


class Service:
    """The RPCs of one service as methods, e.g. client.location_service.get_location."""

    def __init__(self, client: "_ClientBase", name: str, methods: list) -> None:
        self.name = name
        for info in methods:
            setattr(self, info.python_name, RpcMethod(client, info))

    def __repr__(self) -> str:
        return f"<Service {self.name}>"


class _ClientBase:
    """Binds a Service per proto service and flattens unique method names onto the client."""

    def _setup(self, token: Optional[str], timeout: Optional[float],
               metadata: Optional[Mapping[str, str]]) -> None:
        self.timeout = timeout
        self.metadata: Dict[str, str] = {k.lower(): v for k, v in (metadata or {}).items()}
        token = os.environ.get("LARDER_TOKEN") if token is None else token
        if token:
            self.metadata["authorization"] = f"Bearer {token}"
        counts = Counter(info.python_name for info in METHODS.values())
        for service_name, infos in SERVICES.items():
            service = Service(self, service_name, infos)
            attribute = snake_case(service_name.rsplit(".", 1)[-1])  # "location_service", "health"
            assert not hasattr(self, attribute), f"service {service_name} clashes with {attribute}"
            setattr(self, attribute, service)
            for info in infos:
                if counts[info.python_name] == 1 and not hasattr(self, info.python_name):
                    setattr(self, info.python_name, getattr(service, info.python_name))

    def _prepare(self, method: str, request: Union[Message, bytes], timeout: Any,
                 metadata: Optional[Mapping[str, str]]):
        path = "/" + method.lstrip("/")
        payload = request if isinstance(request, (bytes, bytearray)) else request.SerializeToString()
        merged = {**self.metadata, **{k.lower(): v for k, v in (metadata or {}).items()}}
        return path, bytes(payload), self.timeout if timeout is DEFAULT else timeout, merged

    @staticmethod
    def _decode(path: str, payload: bytes, response_type: Optional[Type[Message]]) -> Any:
        info = METHODS.get(path)
        cls = response_type or (info.response_type if info else None)
        if cls is None:
            return payload  # an unknown method: the raw reply bytes
        try:
            return cls.FromString(payload)
        except DecodeError as e:
            raise LarderError(StatusCode.INTERNAL, f"{path}: undecodable {cls.DESCRIPTOR.full_name} reply: {e}")


class LarderClient(_ClientBase):
    """A thread-safe client on one connection; every RPC is a method.

    client = LarderClient("127.0.0.1:7411", token=None, timeout=5.0)
    client.location_service.list_locations()   # or client.list_locations()
    client.get_location(id=...)                # raises LarderError
    """

    def __init__(self, address: Optional[Address] = None, *, token: Optional[str] = None,
                 timeout: Optional[float] = None, metadata: Optional[Mapping[str, str]] = None,
                 connect_timeout: float = 10.0, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        host, port = parse_address(address)
        self.connection = Connection(host, port, connect_timeout=connect_timeout,
                                     max_frame_bytes=max_frame_bytes)
        self._setup(token, timeout, metadata)

    def call(self, method: str, request: Union[Message, bytes] = b"", *, timeout: Any = DEFAULT,
             metadata: Optional[Mapping[str, str]] = None,
             response_type: Optional[Type[Message]] = None) -> Any:
        """Calls a method by wire name ('/larder.v1.LocationService/GetLocation').

        Returns the decoded response for a known method (or response_type),
        else the raw reply bytes; raises LarderError.
        """
        path, payload, timeout, merged = self._prepare(method, request, timeout, metadata)
        return self._decode(path, self.connection.call(path, payload, timeout=timeout, metadata=merged),
                            response_type)

    def call_future(self, method: str, request: Union[Message, bytes] = b"", *, timeout: Any = DEFAULT,
                    metadata: Optional[Mapping[str, str]] = None,
                    response_type: Optional[Type[Message]] = None) -> "Future[Any]":
        """Like call() but returns at once with a Future; the timeout is enforced by the server."""
        path, payload, timeout, merged = self._prepare(method, request, timeout, metadata)
        raw = self.connection.call_future(path, payload, timeout=timeout, metadata=merged)
        result: Future = Future()

        def done(f: Future) -> None:
            try:
                result.set_result(self._decode(path, f.result(), response_type))
            except Exception as e:  # LarderError, or CancelledError if the caller cancelled
                result.set_exception(e)

        raw.add_done_callback(done)
        return result

    def close(self) -> None:
        """Closes the connection; calls still pending fail with UNAVAILABLE."""
        self.connection.close()

    def __enter__(self) -> "LarderClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncLarderClient(_ClientBase):
    """The asyncio client: `client = await AsyncLarderClient.connect(...)`; methods are awaitable."""

    def __init__(self, connection: AsyncConnection, *, token: Optional[str] = None,
                 timeout: Optional[float] = None, metadata: Optional[Mapping[str, str]] = None) -> None:
        self.connection = connection
        self._setup(token, timeout, metadata)

    @classmethod
    async def connect(cls, address: Optional[Address] = None, *, token: Optional[str] = None,
                      timeout: Optional[float] = None, metadata: Optional[Mapping[str, str]] = None,
                      connect_timeout: float = 10.0,
                      max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> "AsyncLarderClient":
        """Connects; raises LarderError(UNAVAILABLE) when the server cannot be reached."""
        host, port = parse_address(address)
        connection = await AsyncConnection.connect(host, port, connect_timeout=connect_timeout,
                                                   max_frame_bytes=max_frame_bytes)
        return cls(connection, token=token, timeout=timeout, metadata=metadata)

    async def call(self, method: str, request: Union[Message, bytes] = b"", *, timeout: Any = DEFAULT,
                   metadata: Optional[Mapping[str, str]] = None,
                   response_type: Optional[Type[Message]] = None) -> Any:
        """Same as LarderClient.call, awaited."""
        path, payload, timeout, merged = self._prepare(method, request, timeout, metadata)
        raw = await self.connection.call(path, payload, timeout=timeout, metadata=merged)
        return self._decode(path, raw, response_type)

    async def close(self) -> None:
        await self.connection.close()

    async def __aenter__(self) -> "AsyncLarderClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
