"""What the generated typed methods (`_gen/api.py`) are made of.

A generated method builds a `Call` (method path, request message, response
type, call options); the `unary` / `async_unary` decorators turn it into a
method that runs the call on the client, blocking or awaitable, with
`.future(...)` and `.call(...)` beside it. For type checkers and editors,
`_gen/api.py` declares each such method with a generated Protocol of plain
signatures (`_LocationService_get_location`): every request field is a typed
keyword argument and the return type is the exact response message.
"""
from __future__ import annotations

import datetime as _dt
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, Union, cast, overload

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.field_mask_pb2 import FieldMask
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from .status import LarderError, StatusCode

if TYPE_CHECKING:
    from .client import AsyncLarderClient, LarderClient

P = ParamSpec("P")
R = TypeVar("R", bound=Message)
M = TypeVar("M", bound=Message)
T = TypeVar("T")


class _Default:
    def __repr__(self) -> str:
        return "<client default>"


#: Use the client's default timeout (LarderClient(timeout=...)).
DEFAULT = _Default()

#: A call's timeout= option: seconds, None for none, or DEFAULT for the client's.
Timeout = Union[float, None, _Default]
#: A call's metadata= option: extra metadata entries (keys are sent lower case).
Metadata = Mapping[str, str]


@dataclass(frozen=True)
class Call(Generic[R]):
    """One call ready to run: what a generated method returns to its decorator."""

    path: str
    request: Message
    response_type: type[R]
    timeout: Timeout = DEFAULT
    metadata: Metadata | None = None


def to_timestamp(value: _dt.datetime) -> Timestamp:
    """An aware datetime as a Timestamp; a naive one is a TypeError (never silently UTC).

    A datetime holds microseconds, so the Timestamp's nanos are a multiple of 1,000. An
    instant before 0001-01-01T00:00:00Z (e.g. 0001-01-01T00:30:00+01:00) is a ValueError:
    no Timestamp the server takes is there.
    """
    if not isinstance(value, _dt.datetime):
        raise TypeError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise TypeError(f"naive datetime {value.isoformat()} has no time zone: pass an aware one, "
                        f"e.g. datetime.now(timezone.utc) or dt.replace(tzinfo=ZoneInfo('Asia/Taipei'))")
    try:
        utc = value.astimezone(_dt.timezone.utc)
    except OverflowError as error:
        raise ValueError(f"{value.isoformat()} is outside the years 1-9999 in UTC, "
                         f"where times must be") from error
    stamp = Timestamp()
    stamp.FromDatetime(utc)
    return stamp


def to_datetime(value: Timestamp, tz: _dt.tzinfo = _dt.timezone.utc) -> _dt.datetime:
    """A Timestamp as an aware datetime, in UTC unless tz is given.

    A datetime holds microseconds: the nanoseconds below them are dropped (123456789 ns
    becomes 123456 us), so writing the datetime back moves the time up to 999 ns earlier.
    To keep a time exactly, pass the Timestamp itself (or a {"seconds", "nanos"} dict).
    A Timestamp whose local time in tz falls outside the years 1-9999 (0001-01-01T00:00:00Z
    in America/New_York), or that is not a valid Timestamp, is a ValueError.
    """
    try:
        return value.ToDatetime(tzinfo=tz)
    except (OverflowError, ValueError) as error:
        raise ValueError(f"Timestamp(seconds={value.seconds}, nanos={value.nanos}) has no datetime in {tz}: "
                         f"{error} (a datetime holds the years 1-9999; keep the Timestamp, "
                         f"or convert in UTC)") from error


def build(cls: type[M], request: object, fields: Mapping[str, object]) -> M:
    """The request message from a message, a dict, or keyword fields (None = unset).

    Datetimes become Timestamps (aware ones only), lists of paths become
    FieldMasks, nested dicts become their messages.
    """
    given = {name: value for name, value in fields.items() if value is not None}
    if request is None:
        return _make(cls, _convert(cast(Descriptor, cls.DESCRIPTOR), given))
    if given:
        raise TypeError(f"{cls.DESCRIPTOR.full_name}: pass a request or keyword fields, not both")
    if isinstance(request, cls):
        return request
    if isinstance(request, Mapping):
        return _make(cls, _convert(cast(Descriptor, cls.DESCRIPTOR), dict(request)))
    got = getattr(getattr(request, "DESCRIPTOR", None), "full_name", None)
    if got == cls.DESCRIPTOR.full_name:
        # The same message from other generated code (grpcio-health-checking's health_pb2):
        # larder_client keeps its own descriptor pool, so its classes are not those.
        raise TypeError(f"expected larder_client's {got}, got one from another module ({type(request).__module__}): "
                        f"pass a dict of its fields, or build it with larder_client's messages")
    raise TypeError(f"expected a {cls.DESCRIPTOR.full_name} or a dict of its fields, got {type(request).__name__}")


def _make(cls: type[M], values: Mapping[str, Any]) -> M:
    """cls(**values), naming the field when protobuf refuses a value (its own message names
    none: "bad argument type for built-in operation")."""
    try:
        return cls(**values)
    except (TypeError, ValueError) as error:
        for name, value in values.items():
            try:
                cls(**{name: value})
            except (TypeError, ValueError) as field_error:
                field = cls.DESCRIPTOR.fields_by_name.get(name)
                if isinstance(value, Mapping) and field is not None and field.message_type is not None \
                        and not field.is_repeated:
                    _make(type(getattr(cls(), name)), value)  # names the nested field
                shown = repr(value)
                shown = shown if len(shown) <= 60 else shown[:57] + "..."
                raise type(error)(f"{cls.DESCRIPTOR.full_name}.{name}: {field_error} "
                                  f"(got {type(value).__name__} {shown})") from error
        raise


def _convert(descriptor: Descriptor, values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in values.items():
        field = descriptor.fields_by_name.get(name)
        if field is None:
            raise ValueError(f'{descriptor.full_name} has no field "{name}"')
        try:
            out[name] = _convert_field(field, value)
        except ValueError as error:
            if not isinstance(value, _dt.datetime):
                raise
            raise ValueError(f"{descriptor.full_name}.{name}: {error}") from error
    return out


def _convert_field(field: FieldDescriptor, value: Any) -> Any:
    kind = field.message_type
    if kind is None or kind.GetOptions().map_entry:
        return value
    if field.is_repeated and not isinstance(value, (str, bytes, Mapping)):
        return [_convert_one(kind, item) for item in value]
    return _convert_one(kind, value)


def _convert_one(kind: Descriptor, value: Any) -> Any:
    if kind.full_name == "google.protobuf.Timestamp" and isinstance(value, _dt.datetime):
        return to_timestamp(value)
    if kind.full_name == "google.protobuf.FieldMask" and isinstance(value, (list, tuple)):
        return FieldMask(paths=list(value))
    if isinstance(value, Mapping):
        return _convert(kind, value)
    return value


# --- the decorators --------------------------------------------------------------------------------

class unary(Generic[P, R]):
    """A blocking RPC method: `client.get_location(id=...)`, or `.future(...)` for a Future."""

    def __init__(self, make: Callable[Concatenate[Any, P], Call[R]]) -> None:
        self._make = make
        self.__name__ = make.__name__
        self.__doc__ = make.__doc__

    @overload
    def __get__(self, host: None, owner: type | None = None) -> unary[P, R]: ...
    @overload
    def __get__(self, host: object, owner: type | None = None) -> BoundUnary[P, R]: ...

    def __get__(self, host: object, owner: type | None = None) -> unary[P, R] | BoundUnary[P, R]:
        if host is None:
            return self
        return BoundUnary(host, self)


class BoundUnary(Generic[P, R]):
    """A unary RPC bound to a LarderClient."""

    def __init__(self, host: object, method: unary[P, R]) -> None:
        self._host, self._method = host, method
        self.__name__ = method.__name__
        self.__doc__ = method.__doc__

    @property
    def _client(self) -> LarderClient:
        return cast("LarderClient", getattr(self._host, "_larder_client"))

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._client.run(self._method._make(self._host, *args, **kwargs))

    def future(self, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        """Starts the call without waiting; the timeout is enforced by the server."""
        return self._client.run_future(self._method._make(self._host, *args, **kwargs))

    def call(self, *args: P.args, **kwargs: P.kwargs) -> Call[R]:
        """The Call this method would run, without running it."""
        return self._method._make(self._host, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<RPC method {self.__name__}>"


class async_unary(Generic[P, R]):
    """An awaitable RPC method: `await client.get_location(id=...)`."""

    def __init__(self, make: Callable[Concatenate[Any, P], Call[R]]) -> None:
        self._make = make
        self.__name__ = make.__name__
        self.__doc__ = make.__doc__

    @overload
    def __get__(self, host: None, owner: type | None = None) -> async_unary[P, R]: ...
    @overload
    def __get__(self, host: object, owner: type | None = None) -> AsyncBoundUnary[P, R]: ...

    def __get__(self, host: object, owner: type | None = None) -> async_unary[P, R] | AsyncBoundUnary[P, R]:
        if host is None:
            return self
        return AsyncBoundUnary(host, self)


class AsyncBoundUnary(Generic[P, R]):
    """A unary RPC bound to an AsyncLarderClient."""

    def __init__(self, host: object, method: async_unary[P, R]) -> None:
        self._host, self._method = host, method
        self.__name__ = method.__name__
        self.__doc__ = method.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, R]:
        client = cast("AsyncLarderClient", getattr(self._host, "_larder_client"))
        return client.run(self._method._make(self._host, *args, **kwargs))

    def call(self, *args: P.args, **kwargs: P.kwargs) -> Call[R]:
        """The Call this method would run, without running it."""
        return self._method._make(self._host, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<async RPC method {self.__name__}>"


# --- page iterators --------------------------------------------------------------------------------

#: The most pages one page iterator fetches (as the CLI's `--all`): past it, a server that
#: keeps sending new next_page_tokens (with empty pages, the caller's loop never even runs)
#: ends the listing with LarderError(RESOURCE_EXHAUSTED) instead of running for ever.
#: Read when an iterator starts; at 1,000 rows a page it allows 10 million rows.
MAX_PAGES = 10_000


class _PageTokens:
    """The next_page_tokens one listing has had, to notice one the server sends again: following
    it would fetch the same pages for ever. Every token is kept while they total at most
    MAX_CHARS characters (a Larder server's are 50), the last one always. A cycle of tokens
    that begins past those is caught by the page limit, MAX_PAGES."""

    MAX_CHARS = 1 << 20

    def __init__(self, method: str) -> None:
        self._method = method
        self._seen: set[str] = set()
        self._chars = 0
        self._last: str | None = None
        self._pages = 0
        self._max_pages = MAX_PAGES

    def follow(self, token: str) -> bool:
        """True when the listing goes on with `token`, False when it ended (empty token).

        Raises LarderError(INTERNAL) when this listing already had `token`, and
        LarderError(RESOURCE_EXHAUSTED) when it has had MAX_PAGES pages."""
        self._pages += 1
        if not token:
            return False
        if token == self._last or token in self._seen:
            shown = repr(token) if len(token) <= 64 else f"{token[:64]!r}… ({len(token.encode())} bytes)"
            raise LarderError(StatusCode.INTERNAL,
                              f"{self._method}: page {self._pages} from the server has next_page_token {shown}, "
                              "which an earlier page of this listing had; following it would repeat pages for ever")
        if self._pages >= self._max_pages:
            raise LarderError(StatusCode.RESOURCE_EXHAUSTED,
                              f"{self._method}: stopped after {self._pages:,} pages, the most a page iterator "
                              f"follows (larder_client.rpc.MAX_PAGES); the server still sent a next_page_token, "
                              "so the listing is incomplete")
        self._last = token
        if self._chars + len(token) <= self.MAX_CHARS:
            self._seen.add(token)
            self._chars += len(token)
        return True


#: Rows a page iterator asks for per page when its page_size is None: the most a
#: server sends in one page (a page_size of 0 would ask ListLocations and the other
#: name-sorted lists for every row in one reply).
ITER_PAGE_SIZE = 1000


def _page_fields(fields: Mapping[str, object]) -> dict[str, object]:
    """The request fields of a page iterator, with page_size None made ITER_PAGE_SIZE."""
    given = dict(fields)
    if given.get("page_size", 0) is None:
        given["page_size"] = ITER_PAGE_SIZE
    return given


def iter_pages(fetch: Callable[..., Message], item_type: type[T], items: str,
               fields: Mapping[str, object], timeout: Timeout, metadata: Metadata | None) -> Iterator[T]:
    """Every item of a paged list method, following next_page_token until it is empty.

    Raises LarderError(INTERNAL) when the server sends a next_page_token this listing already had,
    and LarderError(RESOURCE_EXHAUSTED) after MAX_PAGES pages that all had one."""
    token = ""
    tokens = _PageTokens(getattr(fetch, "__name__", "list").lstrip("_"))
    fields = _page_fields(fields)
    while True:
        page = fetch(page_token=token, timeout=timeout, metadata=metadata, **fields)
        for item in getattr(page, items):
            yield cast(T, item)
        token = cast(str, getattr(page, "next_page_token"))
        if not tokens.follow(token):
            return


async def aiter_pages(fetch: Callable[..., Coroutine[Any, Any, Message]], item_type: type[T], items: str,
                      fields: Mapping[str, object], timeout: Timeout,
                      metadata: Metadata | None) -> AsyncIterator[T]:
    """iter_pages for the asyncio client."""
    token = ""
    tokens = _PageTokens(getattr(fetch, "__name__", "list").lstrip("_"))
    fields = _page_fields(fields)
    while True:
        page = await fetch(page_token=token, timeout=timeout, metadata=metadata, **fields)
        for item in getattr(page, items):
            yield cast(T, item)
        token = cast(str, getattr(page, "next_page_token"))
        if not tokens.follow(token):
            return


class ServiceBase:
    """The RPCs of one service, e.g. client.location_service.get_location."""

    def __init__(self, client: object) -> None:
        self._larder_client = client

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
