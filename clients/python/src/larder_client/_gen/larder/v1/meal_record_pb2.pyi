import datetime

from google.protobuf import empty_pb2 as _empty_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from larder_client._gen.larder.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MealRecord(_message.Message):
    __slots__ = ("id", "name", "calories", "category", "eaten_at", "create_time", "update_time")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CALORIES_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    EATEN_AT_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    calories: int
    category: _common_pb2.MealCategory
    eaten_at: _timestamp_pb2.Timestamp
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., calories: _Optional[int] = ..., category: _Optional[_Union[_common_pb2.MealCategory, str]] = ..., eaten_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateMealRecordRequest(_message.Message):
    __slots__ = ("meal_record",)
    MEAL_RECORD_FIELD_NUMBER: _ClassVar[int]
    meal_record: MealRecord
    def __init__(self, meal_record: _Optional[_Union[MealRecord, _Mapping]] = ...) -> None: ...

class GetMealRecordRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListMealRecordsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "start_time", "end_time", "category")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    category: _common_pb2.MealCategory
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., category: _Optional[_Union[_common_pb2.MealCategory, str]] = ...) -> None: ...

class ListMealRecordsResponse(_message.Message):
    __slots__ = ("meal_records", "next_page_token")
    MEAL_RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    meal_records: _containers.RepeatedCompositeFieldContainer[MealRecord]
    next_page_token: str
    def __init__(self, meal_records: _Optional[_Iterable[_Union[MealRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateMealRecordRequest(_message.Message):
    __slots__ = ("meal_record", "update_mask")
    MEAL_RECORD_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    meal_record: MealRecord
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, meal_record: _Optional[_Union[MealRecord, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class DeleteMealRecordRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class SummarizeMealRecordsRequest(_message.Message):
    __slots__ = ("start_time", "end_time", "utc_offset_minutes", "time_zone")
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    UTC_OFFSET_MINUTES_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    utc_offset_minutes: int
    time_zone: str
    def __init__(self, start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., utc_offset_minutes: _Optional[int] = ..., time_zone: _Optional[str] = ...) -> None: ...

class CategoryTotal(_message.Message):
    __slots__ = ("category", "total_calories", "meal_count")
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CALORIES_FIELD_NUMBER: _ClassVar[int]
    MEAL_COUNT_FIELD_NUMBER: _ClassVar[int]
    category: _common_pb2.MealCategory
    total_calories: int
    meal_count: int
    def __init__(self, category: _Optional[_Union[_common_pb2.MealCategory, str]] = ..., total_calories: _Optional[int] = ..., meal_count: _Optional[int] = ...) -> None: ...

class DailySummary(_message.Message):
    __slots__ = ("date", "total_calories", "meal_count", "categories")
    DATE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CALORIES_FIELD_NUMBER: _ClassVar[int]
    MEAL_COUNT_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    date: str
    total_calories: int
    meal_count: int
    categories: _containers.RepeatedCompositeFieldContainer[CategoryTotal]
    def __init__(self, date: _Optional[str] = ..., total_calories: _Optional[int] = ..., meal_count: _Optional[int] = ..., categories: _Optional[_Iterable[_Union[CategoryTotal, _Mapping]]] = ...) -> None: ...

class SummarizeMealRecordsResponse(_message.Message):
    __slots__ = ("days", "total_calories", "meal_count", "categories")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CALORIES_FIELD_NUMBER: _ClassVar[int]
    MEAL_COUNT_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    days: _containers.RepeatedCompositeFieldContainer[DailySummary]
    total_calories: int
    meal_count: int
    categories: _containers.RepeatedCompositeFieldContainer[CategoryTotal]
    def __init__(self, days: _Optional[_Iterable[_Union[DailySummary, _Mapping]]] = ..., total_calories: _Optional[int] = ..., meal_count: _Optional[int] = ..., categories: _Optional[_Iterable[_Union[CategoryTotal, _Mapping]]] = ...) -> None: ...
