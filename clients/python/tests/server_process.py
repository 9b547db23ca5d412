"""A real larder-server child process on an ephemeral loopback port, for tests.

Imports nothing from larder_client at module level, so suites that must not load it
(the stock-gRPC interop tests in clients/interop) share this runner too.

The binary: $LARDER_SERVER_BIN, else `swift build --show-bin-path` in the repository
root + /larder-server, after `swift build --product larder-server` (a no-op when up to
date, so the tests never run a stale server).
"""
from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r'\bevent="?listening"?\b.*\baddress="?([^"\s]+):(\d+)"?')
START_TIMEOUT = 120.0


def _swift(*args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(["swift", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)


def find_server_binary() -> Path:
    """The larder-server to test ($LARDER_SERVER_BIN, else built here); fails the test run if none."""
    explicit = os.environ.get("LARDER_SERVER_BIN")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            pytest.fail(f"LARDER_SERVER_BIN={explicit} is not a file")
        return path
    try:
        shown = _swift("build", "--show-bin-path", timeout=300)
    except FileNotFoundError:
        pytest.fail("swift is not on PATH: install it or set LARDER_SERVER_BIN to a larder-server binary")
    if shown.returncode != 0:
        pytest.fail(f"swift build --show-bin-path failed:\n{shown.stderr}")
    path = Path(shown.stdout.strip().splitlines()[-1]) / "larder-server"
    built = _swift("build", "--product", "larder-server", timeout=1800)
    if built.returncode != 0 or not path.is_file():
        pytest.fail(f"swift build --product larder-server failed:\n{built.stdout[-4000:]}\n{built.stderr[-4000:]}")
    return path


class RunningServer:
    """A larder-server child process; `address` is where it listens, `log` its stderr lines."""

    def __init__(self, binary: Path, db: Path, *extra: str, port: int = 0) -> None:
        # Only our flags configure it: drop LARDER_* settings from the environment.
        env = {k: v for k, v in os.environ.items() if not k.startswith("LARDER_")}
        self.db = db
        self.process = subprocess.Popen(
            [str(binary), "--listen", f"127.0.0.1:{port}", "--db", str(db), *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", errors="replace", env=env)
        self.log: List[str] = []
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.host, self.port = self._wait_for_listening()
        self.address = f"{self.host}:{self.port}"

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:  # ends at EOF, when the process exits
            self.log.append(line.rstrip("\n"))
            self._lines.put(line)
        self._lines.put(None)

    def _wait_for_listening(self) -> tuple[str, int]:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            match = LISTENING.search(line)
            if match:
                return match.group(1), int(match.group(2))
        self.stop()
        log = "\n".join(self.log)
        pytest.fail(f"larder-server did not log event=listening within {START_TIMEOUT} s "
                    f"(exit code {self.process.returncode}); stderr:\n{log}")

    def client(self, **options: Any) -> Any:
        """A larder_client.LarderClient for this server (30 s timeout unless given)."""
        from larder_client import LarderClient

        options.setdefault("timeout", 30)
        return LarderClient(self.address, **options)

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def wait(self, timeout: float = 30) -> int:
        return self.process.wait(timeout)

    def stop(self) -> Optional[int]:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # in case a test left it stopped
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(15)
        return self.process.returncode


# Fixtures shared by the suites that run the real server (imported into their conftest.py).

@pytest.fixture(scope="session")
def server_binary() -> Path:
    return find_server_binary()


def _starter(server_binary: Path, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Callable[..., RunningServer]]:
    """start(*flags, db=None, port=0) -> a RunningServer (on a fresh temp database unless db is
    given, on an ephemeral port unless port is); each one started is stopped when this ends."""
    servers: List[RunningServer] = []

    def start(*extra: str, db: Optional[Path] = None, port: int = 0) -> RunningServer:
        path = db or tmp_path_factory.mktemp("larder") / "larder.sqlite"
        server = RunningServer(server_binary, path, *extra, port=port)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def start_server(server_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., RunningServer]]:
    """Starts servers for one test: stopped when the test ends (not at the end of the session,
    which kept dozens running at once)."""
    yield from _starter(server_binary, tmp_path_factory)


@pytest.fixture(scope="module")
def start_module_server(server_binary: Path, tmp_path_factory: pytest.TempPathFactory
                        ) -> Iterator[Callable[..., RunningServer]]:
    """Starts servers that the tests of one module share: stopped after its last test."""
    yield from _starter(server_binary, tmp_path_factory)


@pytest.fixture(scope="session")
def shared_server(server_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One server for tests that only touch data they create (unique names)."""
    for start in _starter(server_binary, tmp_path_factory):
        yield start()

