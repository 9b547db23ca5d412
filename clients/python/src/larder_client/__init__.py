"""Python client for Larder: protobuf messages over the Larder wire protocol (docs/PROTOCOL.md).

    from larder_client import LarderClient
    with LarderClient("127.0.0.1:7411") as client:
        for location in client.list_locations().locations:
            print(location.name, location.color_hex)
"""
from .client import DEFAULT, AsyncLarderClient, LarderClient, RpcMethod, Service, parse_address
from .methods import METHODS, SERVICES, MethodInfo
from .status import LarderError, StatusCode
from .transport import Connection

__all__ = [
    "DEFAULT", "METHODS", "SERVICES", "AsyncLarderClient", "Connection", "LarderClient", "LarderError",
    "MethodInfo", "RpcMethod", "Service", "StatusCode", "parse_address",
]
__version__ = "0.1.0"
