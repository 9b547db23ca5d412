"""The RPC table, derived from the generated service descriptors (never written by hand)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Type

from google.protobuf.descriptor import FileDescriptor

from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from ._gen.grpc.health.v1 import health_pb2
from ._gen.larder.admin.v1 import admin_pb2
from ._gen.larder.reflection.v1 import reflection_pb2
from ._gen.larder.v1 import category_group_pb2, item_category_pb2, location_pb2, meal_record_pb2

#: Every generated module that declares services.
SERVICE_MODULES = (category_group_pb2, item_category_pb2, location_pb2, meal_record_pb2, health_pb2,
                   reflection_pb2, admin_pb2)

#: Keyword arguments of a bound method that are call options, not request fields.
CALL_OPTIONS = frozenset({"timeout", "metadata"})


@dataclass(frozen=True)
class MethodInfo:
    """One unary RPC: its wire name and its request and response classes."""

    path: str                      # "/larder.v1.LocationService/GetLocation", sent as the method
    service: str                   # "larder.v1.LocationService"
    name: str                      # "GetLocation"
    python_name: str               # "get_location"
    request_type: Type[Message]
    response_type: Type[Message]


def snake_case(name: str) -> str:
    """'ListCategoryGroups' -> 'list_category_groups'."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _discover() -> Dict[str, MethodInfo]:
    methods: Dict[str, MethodInfo] = {}
    for module in SERVICE_MODULES:
        file: FileDescriptor = module.DESCRIPTOR
        for service in file.services_by_name.values():
            for method in service.methods:
                if method.client_streaming or method.server_streaming:
                    continue  # the Larder wire protocol carries unary calls only
                clash = CALL_OPTIONS & set(method.input_type.fields_by_name)
                if clash:
                    raise RuntimeError(f"{method.full_name}: request fields {sorted(clash)} clash with "
                                       f"the call options of larder_client; rename them in proto/")
                info = MethodInfo(
                    path=f"/{service.full_name}/{method.name}",
                    service=service.full_name,
                    name=method.name,
                    python_name=snake_case(method.name),
                    request_type=GetMessageClass(method.input_type),
                    response_type=GetMessageClass(method.output_type),
                )
                methods[info.path] = info
    return methods


#: Every RPC by its wire name, e.g. METHODS["/larder.v1.LocationService/GetLocation"].
METHODS: Dict[str, MethodInfo] = _discover()

#: The RPCs of each service, by full service name, in declaration order.
SERVICES: Dict[str, List[MethodInfo]] = {}
for _info in METHODS.values():
    SERVICES.setdefault(_info.service, []).append(_info)
del _info
