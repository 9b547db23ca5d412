"""Helpers of the interop tests: the generated stubs' modules, and a lean-protocol call to compare with."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Optional


def unique(prefix: str) -> str:
    """A name no other test uses, for data on a shared server."""
    return f"{prefix} {uuid.uuid4().hex[:12]}"


class Stubs:
    """The modules grpcio-tools generated from proto/larder, by short name (`location_pb2`, ...)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def module(self, dotted: str) -> ModuleType:
        return importlib.import_module(dotted)

    def __getattr__(self, name: str) -> ModuleType:
        # location_pb2 → larder.v1.location_pb2; admin_pb2 → larder.admin.v1.admin_pb2; ...
        for package in ("larder.v1", "larder.admin.v1", "larder.reflection.v1"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError:
                continue
        raise AttributeError(name)


def lean_call(address: str, path: str, payload: bytes, token: Optional[str] = None) -> tuple[int, str]:
    """The status code and message the lean protocol gives for this call (larder_client, in a
    process of its own so its descriptors never meet the stubs')."""
    return lean_calls(address, [(path, payload)], token)[0]


_LEAN_CALLS = r"""
import json, sys
from larder_client import LarderClient, LarderError
address, token = sys.argv[1], sys.argv[2] or None
results = []
with LarderClient(address, token=token, timeout=30) as client:
    for path, payload in json.load(sys.stdin):
        try:
            client.call(path, bytes.fromhex(payload))
            results.append([0, ""])
        except LarderError as error:
            results.append([int(error.code), error.message])
print(json.dumps(results))
"""


def lean_calls(address: str, calls: list[tuple[str, bytes]], token: Optional[str] = None) -> list[tuple[int, str]]:
    """lean_call for each (path, payload), in order, on one connection of one process."""
    result = subprocess.run([sys.executable, "-c", _LEAN_CALLS, address, token or ""],
                            input=json.dumps([[path, payload.hex()] for path, payload in calls]),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return [(int(code), str(message)) for code, message in json.loads(result.stdout)]
