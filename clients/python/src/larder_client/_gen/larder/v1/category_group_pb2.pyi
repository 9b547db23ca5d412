import datetime

from google.protobuf import empty_pb2 as _empty_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from larder_client._gen.larder.v1 import item_category_pb2 as _item_category_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CategoryGroup(_message.Message):
    __slots__ = ("id", "name", "color_hex", "create_time", "update_time", "item_categories")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    COLOR_HEX_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    ITEM_CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    color_hex: str
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    item_categories: _containers.RepeatedCompositeFieldContainer[_item_category_pb2.ItemCategory]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., color_hex: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., item_categories: _Optional[_Iterable[_Union[_item_category_pb2.ItemCategory, _Mapping]]] = ...) -> None: ...

class CreateCategoryGroupRequest(_message.Message):
    __slots__ = ("category_group",)
    CATEGORY_GROUP_FIELD_NUMBER: _ClassVar[int]
    category_group: CategoryGroup
    def __init__(self, category_group: _Optional[_Union[CategoryGroup, _Mapping]] = ...) -> None: ...

class GetCategoryGroupRequest(_message.Message):
    __slots__ = ("id", "include_item_categories")
    ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ITEM_CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    id: str
    include_item_categories: bool
    def __init__(self, id: _Optional[str] = ..., include_item_categories: _Optional[bool] = ...) -> None: ...

class ListCategoryGroupsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListCategoryGroupsResponse(_message.Message):
    __slots__ = ("category_groups",)
    CATEGORY_GROUPS_FIELD_NUMBER: _ClassVar[int]
    category_groups: _containers.RepeatedCompositeFieldContainer[CategoryGroup]
    def __init__(self, category_groups: _Optional[_Iterable[_Union[CategoryGroup, _Mapping]]] = ...) -> None: ...

class UpdateCategoryGroupRequest(_message.Message):
    __slots__ = ("category_group", "update_mask")
    CATEGORY_GROUP_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    category_group: CategoryGroup
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, category_group: _Optional[_Union[CategoryGroup, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class DeleteCategoryGroupRequest(_message.Message):
    __slots__ = ("id", "cascade")
    ID_FIELD_NUMBER: _ClassVar[int]
    CASCADE_FIELD_NUMBER: _ClassVar[int]
    id: str
    cascade: bool
    def __init__(self, id: _Optional[str] = ..., cascade: _Optional[bool] = ...) -> None: ...
