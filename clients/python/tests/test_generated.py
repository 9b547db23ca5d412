"""The checked-in generated code matches proto/, and imports only inside the package."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT_ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("grpc_tools") is None,
                    reason="grpcio-tools is not installed (pip install -r requirements-dev.txt)")
def test_generated_code_matches_proto():
    result = subprocess.run([str(CLIENT_ROOT / "scripts" / "generate.sh"), "--check"],
                            env={**os.environ, "PYTHON": sys.executable},
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_generated_modules_import_each_other_inside_the_package():
    code = ("import sys, larder_client, larder_client.messages; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('larder', 'grpc')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"  # no top-level `larder` and no grpcio `grpc` import


def test_messages_carry_their_package_module_names():
    from larder_client.messages import Location
    assert Location.__module__ == "larder_client._gen.larder.v1.location_pb2"
    assert Location.DESCRIPTOR.full_name == "larder.v1.Location"


def test_request_dicts_are_public_beside_the_messages():
    from larder_client import messages

    assert messages.LocationDict.__annotations__.keys() >= {"name", "color_hex", "id"}
    assert "MealRecordDict" in messages.__all__ and "Location" in messages.__all__
