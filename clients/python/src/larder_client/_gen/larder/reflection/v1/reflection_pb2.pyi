from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListServicesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListServicesResponse(_message.Message):
    __slots__ = ("services",)
    SERVICES_FIELD_NUMBER: _ClassVar[int]
    services: _containers.RepeatedCompositeFieldContainer[ServiceInfo]
    def __init__(self, services: _Optional[_Iterable[_Union[ServiceInfo, _Mapping]]] = ...) -> None: ...

class ServiceInfo(_message.Message):
    __slots__ = ("name", "methods")
    NAME_FIELD_NUMBER: _ClassVar[int]
    METHODS_FIELD_NUMBER: _ClassVar[int]
    name: str
    methods: _containers.RepeatedCompositeFieldContainer[MethodInfo]
    def __init__(self, name: _Optional[str] = ..., methods: _Optional[_Iterable[_Union[MethodInfo, _Mapping]]] = ...) -> None: ...

class MethodInfo(_message.Message):
    __slots__ = ("name", "full_name", "input_type", "output_type")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FULL_NAME_FIELD_NUMBER: _ClassVar[int]
    INPUT_TYPE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TYPE_FIELD_NUMBER: _ClassVar[int]
    name: str
    full_name: str
    input_type: str
    output_type: str
    def __init__(self, name: _Optional[str] = ..., full_name: _Optional[str] = ..., input_type: _Optional[str] = ..., output_type: _Optional[str] = ...) -> None: ...

class DescribeTypeRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DescribeTypeResponse(_message.Message):
    __slots__ = ("message_type", "enum_type")
    MESSAGE_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENUM_TYPE_FIELD_NUMBER: _ClassVar[int]
    message_type: MessageType
    enum_type: EnumType
    def __init__(self, message_type: _Optional[_Union[MessageType, _Mapping]] = ..., enum_type: _Optional[_Union[EnumType, _Mapping]] = ...) -> None: ...

class MessageType(_message.Message):
    __slots__ = ("name", "fields", "map_entry")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    MAP_ENTRY_FIELD_NUMBER: _ClassVar[int]
    name: str
    fields: _containers.RepeatedCompositeFieldContainer[FieldInfo]
    map_entry: bool
    def __init__(self, name: _Optional[str] = ..., fields: _Optional[_Iterable[_Union[FieldInfo, _Mapping]]] = ..., map_entry: _Optional[bool] = ...) -> None: ...

class FieldInfo(_message.Message):
    __slots__ = ("name", "json_name", "number", "type", "label", "type_name", "in_oneof", "map_key", "map_value")
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        TYPE_UNSPECIFIED: _ClassVar[FieldInfo.Type]
        TYPE_DOUBLE: _ClassVar[FieldInfo.Type]
        TYPE_FLOAT: _ClassVar[FieldInfo.Type]
        TYPE_INT64: _ClassVar[FieldInfo.Type]
        TYPE_UINT64: _ClassVar[FieldInfo.Type]
        TYPE_INT32: _ClassVar[FieldInfo.Type]
        TYPE_FIXED64: _ClassVar[FieldInfo.Type]
        TYPE_FIXED32: _ClassVar[FieldInfo.Type]
        TYPE_BOOL: _ClassVar[FieldInfo.Type]
        TYPE_STRING: _ClassVar[FieldInfo.Type]
        TYPE_MESSAGE: _ClassVar[FieldInfo.Type]
        TYPE_BYTES: _ClassVar[FieldInfo.Type]
        TYPE_UINT32: _ClassVar[FieldInfo.Type]
        TYPE_ENUM: _ClassVar[FieldInfo.Type]
        TYPE_SFIXED32: _ClassVar[FieldInfo.Type]
        TYPE_SFIXED64: _ClassVar[FieldInfo.Type]
        TYPE_SINT32: _ClassVar[FieldInfo.Type]
        TYPE_SINT64: _ClassVar[FieldInfo.Type]
    TYPE_UNSPECIFIED: FieldInfo.Type
    TYPE_DOUBLE: FieldInfo.Type
    TYPE_FLOAT: FieldInfo.Type
    TYPE_INT64: FieldInfo.Type
    TYPE_UINT64: FieldInfo.Type
    TYPE_INT32: FieldInfo.Type
    TYPE_FIXED64: FieldInfo.Type
    TYPE_FIXED32: FieldInfo.Type
    TYPE_BOOL: FieldInfo.Type
    TYPE_STRING: FieldInfo.Type
    TYPE_MESSAGE: FieldInfo.Type
    TYPE_BYTES: FieldInfo.Type
    TYPE_UINT32: FieldInfo.Type
    TYPE_ENUM: FieldInfo.Type
    TYPE_SFIXED32: FieldInfo.Type
    TYPE_SFIXED64: FieldInfo.Type
    TYPE_SINT32: FieldInfo.Type
    TYPE_SINT64: FieldInfo.Type
    class Label(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        LABEL_UNSPECIFIED: _ClassVar[FieldInfo.Label]
        LABEL_SINGULAR: _ClassVar[FieldInfo.Label]
        LABEL_OPTIONAL: _ClassVar[FieldInfo.Label]
        LABEL_REPEATED: _ClassVar[FieldInfo.Label]
        LABEL_REQUIRED: _ClassVar[FieldInfo.Label]
    LABEL_UNSPECIFIED: FieldInfo.Label
    LABEL_SINGULAR: FieldInfo.Label
    LABEL_OPTIONAL: FieldInfo.Label
    LABEL_REPEATED: FieldInfo.Label
    LABEL_REQUIRED: FieldInfo.Label
    NAME_FIELD_NUMBER: _ClassVar[int]
    JSON_NAME_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    TYPE_NAME_FIELD_NUMBER: _ClassVar[int]
    IN_ONEOF_FIELD_NUMBER: _ClassVar[int]
    MAP_KEY_FIELD_NUMBER: _ClassVar[int]
    MAP_VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    json_name: str
    number: int
    type: FieldInfo.Type
    label: FieldInfo.Label
    type_name: str
    in_oneof: bool
    map_key: FieldInfo
    map_value: FieldInfo
    def __init__(self, name: _Optional[str] = ..., json_name: _Optional[str] = ..., number: _Optional[int] = ..., type: _Optional[_Union[FieldInfo.Type, str]] = ..., label: _Optional[_Union[FieldInfo.Label, str]] = ..., type_name: _Optional[str] = ..., in_oneof: _Optional[bool] = ..., map_key: _Optional[_Union[FieldInfo, _Mapping]] = ..., map_value: _Optional[_Union[FieldInfo, _Mapping]] = ...) -> None: ...

class EnumType(_message.Message):
    __slots__ = ("name", "values")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    name: str
    values: _containers.RepeatedCompositeFieldContainer[EnumValueInfo]
    def __init__(self, name: _Optional[str] = ..., values: _Optional[_Iterable[_Union[EnumValueInfo, _Mapping]]] = ...) -> None: ...

class EnumValueInfo(_message.Message):
    __slots__ = ("name", "number")
    NAME_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    name: str
    number: int
    def __init__(self, name: _Optional[str] = ..., number: _Optional[int] = ...) -> None: ...
