"""Stock grpcio with grpc.ssl_channel_credentials against larder-server over TLS (ALPN h2)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

import tls_certificates
from interop_support import Stubs

TIMEOUT = 60  # seconds: a bound for calls on a busy machine, never a speed expectation


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tls_certificates.Certificates:
    return tls_certificates.make(tmp_path_factory.mktemp("tls"))


def credentials(ca: str, **client: str) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(
        root_certificates=Path(ca).read_bytes(),
        private_key=Path(client["key"]).read_bytes() if "key" in client else None,
        certificate_chain=Path(client["cert"]).read_bytes() if "cert" in client else None)


def logged(server: Any, text: str, seconds: float = 60) -> bool:
    """True once the server's log has a line containing text (its stderr is read by a thread)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(text in line for line in server.log):
            return True
        time.sleep(0.05)
    return False


def code_and_message(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    error: Any = raised.value
    return error.code(), error.details()


def test_unary_calls_over_tls_beside_h2c(stubs: Stubs, start_server: Any, certs: tls_certificates.Certificates) -> None:
    server = start_server(*certs.server_flags(), "--log-level", "debug")
    pb, rpc = stubs.location_pb2, stubs.location_pb2_grpc
    with grpc.secure_channel(f"localhost:{server.port}", credentials(certs.ca)) as secure, \
            grpc.insecure_channel(server.address) as clear:
        created = rpc.LocationServiceStub(secure).CreateLocation(
            pb.CreateLocationRequest(location=pb.Location(name="gRPC over TLS", color_hex="#abcdef")), timeout=TIMEOUT)
        fetched = rpc.LocationServiceStub(clear).GetLocation(pb.GetLocationRequest(id=created.id), timeout=TIMEOUT)
        assert fetched == created
        assert health_pb2_grpc.HealthStub(secure).Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT).status == \
            health_pb2.HealthCheckResponse.SERVING
        code, message = code_and_message(lambda: rpc.LocationServiceStub(secure).GetLocation(
            pb.GetLocationRequest(id="00000000-0000-0000-0000-000000000000"), timeout=TIMEOUT))
        assert code == grpc.StatusCode.NOT_FOUND and "not found" in message
    assert logged(server, "alpn=h2")


def test_untrusted_server_is_unavailable(stubs: Stubs, start_server: Any, certs: tls_certificates.Certificates) -> None:
    server = start_server(*certs.server_flags())
    with grpc.secure_channel(f"localhost:{server.port}", credentials(certs.other_ca)) as channel:
        code, _ = code_and_message(lambda: health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=TIMEOUT))
    assert code == grpc.StatusCode.UNAVAILABLE


def test_tls_only_and_client_certificates(stubs: Stubs, start_server: Any,
                                          certs: tls_certificates.Certificates) -> None:
    server = start_server(*certs.server_flags(), "--tls-only", "--tls-client-ca", certs.ca,
                          "--tls-client-auth", "require", "--access-log")
    pb, rpc = stubs.location_pb2, stubs.location_pb2_grpc
    mutual = credentials(certs.ca, cert=certs.client_cert, key=certs.client_key)
    with grpc.secure_channel(f"localhost:{server.port}", mutual) as channel:
        listed = rpc.LocationServiceStub(channel).ListLocations(pb.ListLocationsRequest(), timeout=TIMEOUT)
        assert len(listed.locations) == 4
    assert logged(server, 'client_cert="CN=larder-test-client,O=Larder Tests"')
    with grpc.secure_channel(f"localhost:{server.port}", credentials(certs.ca)) as channel:
        code, _ = code_and_message(lambda: rpc.LocationServiceStub(channel).ListLocations(
            pb.ListLocationsRequest(), timeout=TIMEOUT))
        assert code == grpc.StatusCode.UNAVAILABLE
    with grpc.insecure_channel(server.address) as channel:
        code, _ = code_and_message(lambda: health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=TIMEOUT))
        assert code == grpc.StatusCode.UNAVAILABLE
