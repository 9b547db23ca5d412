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
from typing import Callable, Iterator, List, Optional

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
import grpc_stubs  # noqa: E402
from interop_support import Stubs  # noqa: E402
from server_process import RunningServer, find_server_binary  # noqa: E402


@pytest.fixture(scope="session")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Stubs:
    out = tmp_path_factory.mktemp("stubs")
    grpc_stubs.generate(out)
    sys.path.insert(0, str(out))
    return Stubs(out)


@pytest.fixture(scope="session")
def server_binary() -> Path:
    return find_server_binary()


@pytest.fixture(scope="session")
def start_server(server_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., RunningServer]]:
    """start_server(*flags, db=None, port=0): a server on a fresh database (stopped at the end)."""
    servers: List[RunningServer] = []

    def start(*extra: str, db: Optional[Path] = None, port: int = 0) -> RunningServer:
        path = db or tmp_path_factory.mktemp("larder") / "larder.sqlite"
        server = RunningServer(server_binary, path, *extra, port=port)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def shared_server(start_server: Callable[..., RunningServer]) -> RunningServer:
    """One server for tests that only touch data they create (unique names)."""
    return start_server()


@pytest.fixture
def channel(shared_server: RunningServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(shared_server.address) as ch:
        grpc.channel_ready_future(ch).result(timeout=30)
        yield ch
