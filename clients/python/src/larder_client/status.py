"""gRPC canonical status codes and the one exception type of this package."""
from __future__ import annotations

import enum


class StatusCode(enum.IntEnum):
    """A gRPC canonical status code, with gRPC's names and numbers."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class LarderError(Exception):
    """A failed call: a canonical status code and a message for the user.

    Raised for error replies from the server and for client-side failures
    (DEADLINE_EXCEEDED on a local timeout, UNAVAILABLE when the connection is
    lost). `raw_code` keeps a number this client does not know (then `code` is
    UNKNOWN).
    """

    def __init__(self, code: int, message: str = "") -> None:
        try:
            self.code = StatusCode(code)
        except ValueError:
            self.code = StatusCode.UNKNOWN
        self.raw_code = int(code)
        self.message = message
        name = self.code.name if self.code == code else f"CODE_{code}"
        super().__init__(f"{name}: {message}" if message else name)

    def __reduce__(self) -> tuple[type[LarderError], tuple[int, str]]:  # keep picklable despite the custom __init__
        return (type(self), (self.raw_code, self.message))
