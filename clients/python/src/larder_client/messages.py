"""Every message and enum of the Larder protos under one roof.

`from larder_client.messages import Location, MealCategory, MEAL_CATEGORY_LUNCH`.
Built from the generated modules' descriptors, so it never lags behind proto/.
"""
from __future__ import annotations

from google.protobuf.message_factory import GetMessageClass

from ._gen.grpc.health.v1 import health_pb2
from ._gen.larder.v1 import category_group_pb2, common_pb2, item_category_pb2, location_pb2, meal_record_pb2

_MODULES = (common_pb2, category_group_pb2, item_category_pb2, location_pb2, meal_record_pb2, health_pb2)

__all__ = []
for _module in _MODULES:
    for _name, _descriptor in _module.DESCRIPTOR.message_types_by_name.items():
        globals()[_name] = GetMessageClass(_descriptor)
        __all__.append(_name)
    for _name in _module.DESCRIPTOR.enum_types_by_name:
        _enum = getattr(_module, _name)
        globals()[_name] = _enum
        __all__.append(_name)
        for _value in _enum.keys():
            globals()[_value] = _enum.Value(_value)
            __all__.append(_value)
del _module, _name, _descriptor, _enum, _value
