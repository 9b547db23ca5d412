"""larder_client in one process with grpc's own Python packages and with stock grpcio stubs.

grpcio-health-checking and grpcio-reflection register grpc.health.v1.* and
grpc.reflection.v1alpha.* in protobuf's default descriptor pool; larder_client's bundled
grpc/health/v1/health.proto once registered the same names there, and whichever came second
failed to import (TypeError: duplicate symbol 'grpc.health.v1.HealthCheckRequest').
"""
from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import grpc
import pytest
from google.protobuf import descriptor_pool

import larder_client  # before grpc's packages: the order that used to fail here
from larder_client import LarderClient
from larder_client.messages import HealthCheckRequest, HealthCheckResponse
from larder_client.methods import SERVICE_MODULES

from grpc_health.v1 import health_pb2 as stock_health_pb2
from grpc_health.v1 import health_pb2_grpc as stock_health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2 as stock_reflection_pb2

SERVING = HealthCheckResponse.SERVING


def test_health_call_with_grpcio_health_checking_loaded(shared_server):
    # Both define grpc.health.v1.HealthCheckRequest: grpc's in the default pool, ours apart.
    default = descriptor_pool.Default()
    assert default.FindMessageTypeByName("grpc.health.v1.HealthCheckRequest") is \
        stock_health_pb2.HealthCheckRequest.DESCRIPTOR
    assert HealthCheckRequest.DESCRIPTOR is not stock_health_pb2.HealthCheckRequest.DESCRIPTOR
    with LarderClient(shared_server.address, timeout=30) as client:
        response = client.check()
        assert response.status == SERVING
        assert client.health.check(service="larder.v1.LocationService").status == SERVING
    # The same wire format: grpc's classes read our messages and ours read theirs.
    assert stock_health_pb2.HealthCheckResponse.FromString(response.SerializeToString()).status == \
        stock_health_pb2.HealthCheckResponse.SERVING
    request = stock_health_pb2.HealthCheckRequest(service="larder.v1.MealRecordService")
    assert HealthCheckRequest.FromString(request.SerializeToString()).service == "larder.v1.MealRecordService"
    assert hasattr(stock_health_pb2_grpc, "HealthStub")
    # Passing grpc's class where ours is expected says why it is refused, not "expected X, got X".
    with LarderClient(shared_server.address, timeout=30) as client:
        with pytest.raises(TypeError, match=r"larder_client's grpc\.health\.v1\.HealthCheckRequest, got one from another "
                                            r"module \(grpc_health\.v1\.health_pb2\): pass a dict of its fields"):
            client.health.check(request)  # type: ignore[arg-type]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)


def test_grpc_packages_first_then_larder_client(shared_server):
    # A fresh interpreter, for the other import order.
    result = _run(f"""
        import grpc_health.v1.health_pb2, grpc_health.v1.health_pb2_grpc
        import grpc_reflection.v1alpha.reflection_pb2
        from larder_client import LarderClient
        with LarderClient({shared_server.address!r}, timeout=30) as client:
            print(client.check().status)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(SERVING)


def test_larder_client_registers_no_grpc_names_in_the_default_pool():
    result = _run("""
        import importlib, pkgutil
        import larder_client, larder_client.aio, larder_client.messages, larder_client.methods
        for module in pkgutil.walk_packages(larder_client._gen.__path__, "larder_client._gen."):
            importlib.import_module(module.name)
        from google.protobuf import descriptor_pool
        pool = descriptor_pool.Default()
        pool.FindFileByName("larder/v1/location.proto")  # our own files are there
        leaked = []
        for name in ("grpc.health.v1.HealthCheckRequest", "grpc.reflection.v1.ServerReflectionRequest",
                     "grpc.reflection.v1alpha.ServerReflectionRequest"):
            try:
                pool.FindMessageTypeByName(name)
                leaked.append(name)
            except KeyError:
                pass
        print(leaked)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_stock_grpcio_stubs_load_beside_larder_client(grpc_stub_dir):
    # Generated from proto/ by grpcio-tools (tests/grpc_stubs.py) and imported by their proto
    # names; larder_client's modules for the same files are loaded already.
    channel = grpc.insecure_channel("127.0.0.1:1")  # never connected: the stubs are only built
    try:
        for ours in SERVICE_MODULES:
            file = ours.DESCRIPTOR
            stem = file.name[:-len(".proto")].replace("/", ".")
            for service in file.services_by_name.values():
                if file.package == "grpc.health.v1":
                    stub = stock_health_pb2_grpc.HealthStub(channel)  # grpc's, not generated here
                else:
                    stub = getattr(importlib.import_module(stem + "_pb2_grpc"), service.name + "Stub")(channel)
                for method in service.methods:
                    assert callable(getattr(stub, method.name)), f"{service.full_name} stub lacks {method.name}"
            if file.package != "grpc.health.v1":
                # One file, one descriptor: both copies are the same bytes, so the pool takes both.
                assert importlib.import_module(stem + "_pb2").DESCRIPTOR.serialized_pb == file.serialized_pb
    finally:
        channel.close()
    assert stock_reflection_pb2.ServerReflectionRequest.DESCRIPTOR.full_name == \
        "grpc.reflection.v1alpha.ServerReflectionRequest"
