"""Stock grpcio stubs generated from proto/ for the tests, never checked in.

What a user of grpcio does: `python -m grpc_tools.protoc --python_out --grpc_python_out` on
proto/, imports named after the proto packages (`from larder.v1 import location_pb2_grpc`).
Only Larder's own protos (proto/larder/**): grpc.health.v1 and grpc.reflection.* come from
grpcio-health-checking and grpcio-reflection, as they would in a user's program (a generated
top-level `grpc` package would also shadow grpcio's). Generated from proto/ on every run, so
they cannot drift; larder_client's copies of the same files are byte-identical descriptors, so
both load into one process.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parents[3] / "proto"


def stub_protos() -> list[str]:
    """Every proto file of Larder's own packages, relative to proto/."""
    return sorted(str(p.relative_to(PROTO_DIR)) for p in (PROTO_DIR / "larder").rglob("*.proto"))


def generate(out: Path) -> None:
    """Writes `*_pb2.py`, `*_pb2.pyi` and `*_pb2_grpc.py` for stub_protos() into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    # `python -m grpc_tools.protoc` adds the well-known types' include directory itself.
    result = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={PROTO_DIR}",
         f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}", *stub_protos()],
        capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"grpc_tools.protoc failed ({result.returncode}):\n{result.stderr}")
