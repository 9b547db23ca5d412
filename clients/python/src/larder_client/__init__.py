"""Python client for Larder: protobuf messages over the Larder wire protocol (docs/PROTOCOL.md).

    from larder_client import LarderClient
    with LarderClient("127.0.0.1:7411") as client:
        for location in client.list_locations().locations:
            print(location.name, location.color_hex)
"""
from .backoff import Backoff
from .client import AsyncLarderClient, LarderClient, parse_address
from .methods import METHODS, SERVICES, MethodInfo
from .rpc import DEFAULT, Call, Metadata, Timeout, to_datetime, to_timestamp
from .status import LarderError, StatusCode
from .tls import tls_context
from .transport import Connection

__all__ = [
    "DEFAULT", "METHODS", "SERVICES", "AsyncLarderClient", "Backoff", "Call", "Connection", "LarderClient",
    "LarderError", "Metadata", "MethodInfo", "StatusCode", "Timeout", "parse_address", "to_datetime",
    "to_timestamp", "tls_context",
]
__version__ = "0.1.0"
