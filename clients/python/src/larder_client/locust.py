"""Locust load tests against Larder: `LarderUser` reports every call to Locust.

    from locust import task
    from larder_client.locust import LarderUser

    class Reader(LarderUser):
        host = "127.0.0.1:7411"          # or locust --host 127.0.0.1:7411

        @task
        def list_locations(self):
            self.client.list_locations()

Each call fires Locust's request event with request_type "larder", name = the
method's wire name, response_time in ms, response_length = reply bytes, and
exception = the LarderError on failure (which is then re-raised to the task).
Needs `pip install larder-client[locust]`.
"""
from __future__ import annotations

import time
from typing import Any, Mapping, Optional, Union

from google.protobuf.message import Message
from locust import User

from .client import LarderClient
from .rpc import DEFAULT, Timeout
from .status import LarderError


class LocustLarderClient(LarderClient):
    """A LarderClient that reports each call to a Locust request event."""

    def __init__(self, address: str, request_event: Any, **options: Any) -> None:
        super().__init__(address, **options)
        self._request_event = request_event

    def call(self, method: str, request: Union[Message, bytes] = b"", *, timeout: Timeout = DEFAULT,
             metadata: Optional[Mapping[str, str]] = None,
             response_type: Optional[type[Message]] = None) -> Any:
        started = time.perf_counter()
        response: Any = None
        error: Optional[LarderError] = None
        try:
            response = super().call(method, request, timeout=timeout, metadata=metadata,
                                    response_type=response_type)
            return response
        except LarderError as e:
            error = e
            raise
        finally:
            length = response.ByteSize() if isinstance(response, Message) else len(response or b"")
            self._request_event.fire(request_type="larder", name="/" + method.lstrip("/"),
                                     response_time=(time.perf_counter() - started) * 1000.0,
                                     response_length=length, exception=error, context={})


class LarderUser(User):
    """A Locust user with its own connection: `self.client` is a LarderClient.

    Class attributes: host ("HOST:PORT"), token (else $LARDER_TOKEN), timeout
    (seconds per call, default 30).
    """

    abstract = True
    token: Optional[str] = None
    timeout: Optional[float] = 30.0

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self.client = LocustLarderClient(self.host or "127.0.0.1:7411", environment.events.request,
                                         token=self.token, timeout=self.timeout)

    def on_stop(self) -> None:
        self.client.close()
