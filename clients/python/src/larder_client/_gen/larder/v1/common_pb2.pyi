from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor

class MealCategory(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEAL_CATEGORY_UNSPECIFIED: _ClassVar[MealCategory]
    MEAL_CATEGORY_BREAKFAST: _ClassVar[MealCategory]
    MEAL_CATEGORY_LUNCH: _ClassVar[MealCategory]
    MEAL_CATEGORY_DINNER: _ClassVar[MealCategory]
    MEAL_CATEGORY_SNACK: _ClassVar[MealCategory]
MEAL_CATEGORY_UNSPECIFIED: MealCategory
MEAL_CATEGORY_BREAKFAST: MealCategory
MEAL_CATEGORY_LUNCH: MealCategory
MEAL_CATEGORY_DINNER: MealCategory
MEAL_CATEGORY_SNACK: MealCategory
