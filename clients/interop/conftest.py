"""Stock gRPC clients against a real larder-server over gRPC on HTTP/2.

Nothing here imports larder_client (except the `lean_call` subprocess of interop_support.py,
which compares statuses with the lean protocol): the stubs are generated from proto/ by grpcio-tools
into a temporary directory at the start of the run, exactly as a user of another
language would generate theirs, and health/reflection use the grpcio-health-checking
and grpcio-reflection packages' own stubs.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
import grpc_stubs  # noqa: E402
from interop_support import Stubs  # noqa: E402
from server_process import RunningServer, server_binary, shared_server, start_module_server, start_server  # noqa: E402,F401 (fixtures)


@pytest.fixture(scope="session")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Stubs:
    out = tmp_path_factory.mktemp("stubs")
    grpc_stubs.generate(out)
    sys.path.insert(0, str(out))
    return Stubs(out)


@pytest.fixture
def channel(shared_server: RunningServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(shared_server.address) as ch:
        grpc.channel_ready_future(ch).result(timeout=30)
        yield ch
