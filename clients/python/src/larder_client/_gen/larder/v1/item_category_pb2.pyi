import datetime

from google.protobuf import empty_pb2 as _empty_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ItemCategory(_message.Message):
    __slots__ = ("id", "name", "icon_name", "category_group_id", "create_time", "update_time")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ICON_NAME_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    icon_name: str
    category_group_id: str
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., icon_name: _Optional[str] = ..., category_group_id: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateItemCategoryRequest(_message.Message):
    __slots__ = ("item_category",)
    ITEM_CATEGORY_FIELD_NUMBER: _ClassVar[int]
    item_category: ItemCategory
    def __init__(self, item_category: _Optional[_Union[ItemCategory, _Mapping]] = ...) -> None: ...

class GetItemCategoryRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListItemCategoriesRequest(_message.Message):
    __slots__ = ("category_group_id",)
    CATEGORY_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    category_group_id: str
    def __init__(self, category_group_id: _Optional[str] = ...) -> None: ...

class ListItemCategoriesResponse(_message.Message):
    __slots__ = ("item_categories",)
    ITEM_CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    item_categories: _containers.RepeatedCompositeFieldContainer[ItemCategory]
    def __init__(self, item_categories: _Optional[_Iterable[_Union[ItemCategory, _Mapping]]] = ...) -> None: ...

class UpdateItemCategoryRequest(_message.Message):
    __slots__ = ("item_category", "update_mask")
    ITEM_CATEGORY_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    item_category: ItemCategory
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, item_category: _Optional[_Union[ItemCategory, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class DeleteItemCategoryRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...
