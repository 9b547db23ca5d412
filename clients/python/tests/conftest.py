"""Fixtures that run the real larder-server (server_process.py) on an ephemeral port."""
from __future__ import annotations

import sys
from pathlib import Path


import pytest

import grpc_stubs
from server_process import RunningServer, server_binary, shared_server, start_module_server, start_server  # noqa: F401 (fixtures)


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
