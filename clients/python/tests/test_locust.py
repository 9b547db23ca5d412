"""LarderUser reports calls to Locust's request event (run in a subprocess: locust patches with gevent)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from fake_server import FakeServer


@pytest.mark.skipif(importlib.util.find_spec("locust") is None, reason="locust is not installed")
def test_larder_user_reports_each_call_to_locust():
    server = FakeServer()
    try:
        result = subprocess.run([sys.executable, str(Path(__file__).with_name("locust_probe.py")), server.address],
                                capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "larder /test/Echo 5 - ms-ok",
        "larder /larder.v1.LocationService/ListLocations 0 LarderError ms-ok",
        "raised UNIMPLEMENTED",
    ]
