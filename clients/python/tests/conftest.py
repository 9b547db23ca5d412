"""Fixtures that run the real larder-server (server_process.py) on an ephemeral port."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import pytest

import grpc_stubs
from server_process import RunningServer, find_server_binary


@pytest.fixture(scope="session")
def server_binary() -> Path:
    return find_server_binary()


@pytest.fixture(scope="session")
def start_server(server_binary, tmp_path_factory):
    """start_server(*flags, db=None, port=0) -> a RunningServer (on a fresh temp database unless db
    is given, on an ephemeral port unless port is); stopped at the end."""
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
def shared_server(start_server) -> RunningServer:
    """One server for tests that only touch data they create (unique names)."""
    return start_server()


@pytest.fixture
def server(start_server) -> RunningServer:
    """A server of this test's own, on a fresh database with the default data."""
    return start_server()


@pytest.fixture
def client(shared_server):
    with shared_server.client() as c:
        yield c


@pytest.fixture(scope="session")
def grpc_stub_dir(tmp_path_factory) -> Path:
    """Stock grpcio stubs of proto/larder/** (tests/grpc_stubs.py) in a directory of this session,
    first on sys.path: `from larder.v1 import location_pb2_grpc` then works."""
    out = tmp_path_factory.mktemp("grpc-stubs")
    grpc_stubs.generate(out)
    sys.path.insert(0, str(out))
    return out
