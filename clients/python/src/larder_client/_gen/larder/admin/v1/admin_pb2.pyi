import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetMetricsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Metrics(_message.Message):
    __slots__ = ("start_time", "connections_open", "connections_accepted", "calls_in_flight", "bytes_received", "bytes_sent", "latency_bounds_seconds", "methods")
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    CONNECTIONS_OPEN_FIELD_NUMBER: _ClassVar[int]
    CONNECTIONS_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    CALLS_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    BYTES_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    BYTES_SENT_FIELD_NUMBER: _ClassVar[int]
    LATENCY_BOUNDS_SECONDS_FIELD_NUMBER: _ClassVar[int]
    METHODS_FIELD_NUMBER: _ClassVar[int]
    start_time: _timestamp_pb2.Timestamp
    connections_open: int
    connections_accepted: int
    calls_in_flight: int
    bytes_received: int
    bytes_sent: int
    latency_bounds_seconds: _containers.RepeatedScalarFieldContainer[float]
    methods: _containers.RepeatedCompositeFieldContainer[MethodMetrics]
    def __init__(self, start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., connections_open: _Optional[int] = ..., connections_accepted: _Optional[int] = ..., calls_in_flight: _Optional[int] = ..., bytes_received: _Optional[int] = ..., bytes_sent: _Optional[int] = ..., latency_bounds_seconds: _Optional[_Iterable[float]] = ..., methods: _Optional[_Iterable[_Union[MethodMetrics, _Mapping]]] = ...) -> None: ...

class MethodMetrics(_message.Message):
    __slots__ = ("method", "calls_by_code", "latency_bucket_counts", "latency_sum_seconds", "calls_started")
    class CallsByCodeEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    METHOD_FIELD_NUMBER: _ClassVar[int]
    CALLS_BY_CODE_FIELD_NUMBER: _ClassVar[int]
    LATENCY_BUCKET_COUNTS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_SUM_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CALLS_STARTED_FIELD_NUMBER: _ClassVar[int]
    method: str
    calls_by_code: _containers.ScalarMap[str, int]
    latency_bucket_counts: _containers.RepeatedScalarFieldContainer[int]
    latency_sum_seconds: float
    calls_started: int
    def __init__(self, method: _Optional[str] = ..., calls_by_code: _Optional[_Mapping[str, int]] = ..., latency_bucket_counts: _Optional[_Iterable[int]] = ..., latency_sum_seconds: _Optional[float] = ..., calls_started: _Optional[int] = ...) -> None: ...

class GetServerInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ServerInfo(_message.Message):
    __slots__ = ("version", "commit", "protocol_version", "start_time")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    version: str
    commit: str
    protocol_version: str
    start_time: _timestamp_pb2.Timestamp
    def __init__(self, version: _Optional[str] = ..., commit: _Optional[str] = ..., protocol_version: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
