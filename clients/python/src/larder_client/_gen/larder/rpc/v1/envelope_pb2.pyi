from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class RequestEnvelope(_message.Message):
    __slots__ = ("call_id", "method", "payload", "timeout_ms", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    method: str
    payload: bytes
    timeout_ms: int
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, call_id: _Optional[int] = ..., method: _Optional[str] = ..., payload: _Optional[bytes] = ..., timeout_ms: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ResponseEnvelope(_message.Message):
    __slots__ = ("call_id", "status_code", "status_message", "payload")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    status_code: int
    status_message: str
    payload: bytes
    def __init__(self, call_id: _Optional[int] = ..., status_code: _Optional[int] = ..., status_message: _Optional[str] = ..., payload: _Optional[bytes] = ...) -> None: ...
