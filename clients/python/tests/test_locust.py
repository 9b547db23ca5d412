"""LarderUser reports calls to Locust's request event (run in a subprocess: locust patches with gevent)."""
from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fake_server import FakeServer


@pytest.mark.skipif(importlib.util.find_spec("locust") is None, reason="locust is not installed")
def test_larder_user_reports_each_call_to_locust():
    server = FakeServer()
    closed = socket.socket()  # bound, not listening: connecting is refused
    closed.bind(("127.0.0.1", 0))
    refused = f"127.0.0.1:{closed.getsockname()[1]}"
    try:
        result = subprocess.run([sys.executable, str(Path(__file__).with_name("locust_probe.py")), server.address,
                                 refused], capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
        closed.close()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 13, result.stdout
    assert lines[:7] == [
        "larder /test/Echo 5 - ms-ok",
        # Failures are grouped by status code (one row per method and code in Locust's table)...
        "larder /larder.v1.LocationService/ListLocations 0 LarderFailure:UNIMPLEMENTED ms-ok",
        "raised UNIMPLEMENTED",
        "larder /test/Status 0 LarderFailure:NOT_FOUND ms-ok",
        "raised NOT_FOUND",
        # ...unless the user class asks for the whole message.
        "larder /test/Status 0 LarderFailure:NOT_FOUND: status 5 ms-ok",
        "raised NOT_FOUND",
    ], result.stdout
    # An exception other than LarderError is a failure, not a success.
    assert lines[7].startswith("larder /test/Echo 0 TypeError:"), result.stdout
    assert lines[8] == "raised TypeError", result.stdout
    # A refused connection fails the user's first call (reported), not the user; the next call
    # waits out the reconnect backoff and makes an attempt of its own.
    for reported, raised in ((lines[9], lines[10]), (lines[11], lines[12])):
        assert reported.startswith("larder /test/Echo 0 LarderFailure:UNAVAILABLE: ") and reported.endswith(" ms-ok"), \
            result.stdout
        assert raised == "raised UNAVAILABLE attempted", result.stdout
