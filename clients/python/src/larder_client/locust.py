"""Locust load tests against Larder: `LarderUser` reports every call to Locust.

    from locust import task
    from larder_client.locust import LarderUser

    class Reader(LarderUser):
        host = "127.0.0.1:7411"          # or locust --host 127.0.0.1:7411

        @task
        def list_locations(self):
            self.client.list_locations()

Each call fires Locust's request event with request_type "larder", name = the
method's wire name, response_time in ms, response_length = reply bytes, and on
failure exception = a LarderFailure whose text is the status code (NOT_FOUND),
so Locust's failure table has one row per method and code; the LarderError with
its message is re-raised to the task. `failure_detail = True` on the user class
reports the whole message instead. Any other exception from a call is reported
as a failure too; a call cut off by the end of the run is not reported.

A user connects on its first call, so a server that refuses connections fails
that call (reported) instead of the user. While the client waits out its
reconnect backoff, a call waits for the next attempt instead of failing at once.
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


class LarderFailure(Exception):
    """What a failed call reports to Locust: its text is the status code (e.g. NOT_FOUND), or
    the LarderError's whole text with `failure_detail`; `error` is the LarderError itself."""

    def __init__(self, error: LarderError, detail: bool = False) -> None:
        super().__init__(str(error) if detail else error.code.name)
        self.error = error


class LocustLarderClient(LarderClient):
    """A LarderClient that reports each call to a Locust request event."""

    def __init__(self, address: str, request_event: Any, *, failure_detail: bool = False, **options: Any) -> None:
        super().__init__(address, **options)
        self._request_event = request_event
        self._failure_detail = failure_detail

    def call(self, method: str, request: Union[Message, bytes] = b"", *, timeout: Timeout = DEFAULT,
             metadata: Optional[Mapping[str, str]] = None,
             response_type: Optional[type[Message]] = None) -> Any:
        started = time.perf_counter()  # before any wait for the backoff: an outage shows as slow failures
        self._wait_for_next_attempt(timeout)
        response: Any = None
        failure: Optional[Exception] = None
        try:
            response = super().call(method, request, timeout=timeout, metadata=metadata,
                                    response_type=response_type)
            return response
        except LarderError as e:
            failure = LarderFailure(e, self._failure_detail)
            raise
        except Exception as e:  # a bug in the task's request, say: a failure, never a success
            failure = e
            raise
        except BaseException:  # the run ends (GreenletExit) or the user stops: not a call that completed
            response = _CUT_OFF
            raise
        finally:
            if response is not _CUT_OFF:
                length = response.ByteSize() if isinstance(response, Message) else len(response or b"")
                self._request_event.fire(request_type="larder", name="/" + method.lstrip("/"),
                                         response_time=(time.perf_counter() - started) * 1000.0,
                                         response_length=length, exception=failure, context={})

    def _wait_for_next_attempt(self, timeout: Timeout) -> None:
        """While the reconnect backoff runs after a failed connection attempt, waits for the next
        attempt, at most the call's timeout (a gevent-friendly sleep under Locust). Failing at once
        instead made each user report about a hundred 0 ms failures a second during an outage."""
        wait = self._retry_at - time.monotonic()
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
            wait = min(wait, float(timeout))
        if wait > 0 and self._last_failure is not None and self._connection is None:
            time.sleep(wait)


_CUT_OFF = object()


class LarderUser(User):
    """A Locust user with its own connection: `self.client` is a LarderClient.

    Class attributes: host ("HOST:PORT"), token (else $LARDER_TOKEN), timeout
    (seconds per call, default 30), failure_detail (report failures with their
    message rather than by status code, default False).
    """

    abstract = True
    token: Optional[str] = None
    timeout: Optional[float] = 30.0
    failure_detail: bool = False

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        # connect=False: the first call connects, so a refused connection fails (and reports)
        # that call; connecting here raised in Locust's spawner and lost the user for the run.
        self.client = LocustLarderClient(self.host or "127.0.0.1:7411", environment.events.request,
                                         failure_detail=self.failure_detail, token=self.token,
                                         timeout=self.timeout, connect=False)

    def on_stop(self) -> None:
        self.client.close()
