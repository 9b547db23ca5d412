"""Certificates for TLS tests, made per run with the openssl CLI (nothing committed expires).

A CA, a server certificate it signed for localhost and 127.0.0.1, a client certificate, and
a second CA that signed nothing the server uses. Shared with clients/interop.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Certificates:
    directory: Path

    def path(self, name: str) -> str:
        return str(self.directory / name)

    @property
    def ca(self) -> str:
        return self.path("ca.pem")

    @property
    def other_ca(self) -> str:
        return self.path("other-ca.pem")

    @property
    def server_cert(self) -> str:
        return self.path("server.pem")

    @property
    def server_key(self) -> str:
        return self.path("server.key")

    @property
    def client_cert(self) -> str:
        return self.path("client.pem")

    @property
    def client_key(self) -> str:
        return self.path("client.key")

    def server_flags(self) -> list[str]:
        return ["--tls-cert", self.server_cert, "--tls-key", self.server_key]


def _openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {done.stderr}")


def make(directory: Path) -> Certificates:
    certs = Certificates(directory)
    for ca, subject in (("ca", "/CN=Larder Test CA"), ("other-ca", "/CN=Some Other CA")):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", certs.path(f"{ca}.key"), "-out", certs.path(f"{ca}.pem"), "-days", "2", "-subj", subject)
    for name, subject, extensions in (
            ("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
            ("client", "/O=Larder Tests/CN=larder-test-client", "extendedKeyUsage=clientAuth\n")):
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", certs.path(f"{name}.key"))
        _openssl("req", "-new", "-key", certs.path(f"{name}.key"), "-out", certs.path(f"{name}.csr"), "-subj", subject)
        Path(certs.path(f"{name}.ext")).write_text(extensions)
        _openssl("x509", "-req", "-in", certs.path(f"{name}.csr"), "-CA", certs.ca, "-CAkey", certs.path("ca.key"),
                 "-CAcreateserial", "-out", certs.path(f"{name}.pem"), "-days", "2",
                 "-extfile", certs.path(f"{name}.ext"))
    return certs
