"""A tiny in-process Larder server for transport tests, with scriptable misbehaviour.

Each request runs in its own thread, so a slow call never holds up a fast one.
Built-in methods (the payload is the argument):

  /test/Echo     reply with the request payload
  /test/Wait     reply only once /test/Release was called with the same payload
  /test/Release  release the /test/Wait calls with this payload, then reply
  /test/Never    never reply
  /test/Status   reply with status int(payload) and message "status <n>"
  /test/Kill     send a call_id 0 reply (status int(payload)) and close
  /test/Close    close the connection without a word
  /test/Huge     send a frame header claiming int(payload) bytes, then close
  anything else  UNIMPLEMENTED, unless registered in `handlers`
"""
from __future__ import annotations

import socket
import struct
import threading
from typing import Callable, Dict, List, Optional

from larder_client._gen.larder.rpc.v1.envelope_pb2 import RequestEnvelope, ResponseEnvelope

HEADER = struct.Struct(">I")
Handler = Callable[[RequestEnvelope], ResponseEnvelope]


def reply(request: RequestEnvelope, payload: bytes = b"", code: int = 0, message: str = "") -> ResponseEnvelope:
    return ResponseEnvelope(call_id=request.call_id, status_code=code, status_message=message, payload=payload)


class _LoopbackServer:
    """A listener on 127.0.0.1:<port, ephemeral by default> that runs `_serve_connection(conn)`
    for each connection in a thread of its own; `stopped` is set by `_close_all`, which closes
    the listener and every connection and joins the threads."""

    def __init__(self, port: int = 0) -> None:
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._connections: List[socket.socket] = []
        self._threads: List[threading.Thread] = []

    def _start_accepting(self) -> None:
        """Call last in a subclass's __init__: connections are served from now on."""
        self._spawn(self._accept_loop)

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(conn)
            self._spawn(self._serve_connection, conn)

    def _serve_connection(self, conn: socket.socket) -> None:
        raise NotImplementedError

    @staticmethod
    def _close(conn: socket.socket) -> None:
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        conn.close()

    def _close_all(self) -> None:
        self.stopped.set()
        self._close(self._listener)  # shutdown wakes the thread blocked in accept()
        with self._lock:
            connections, threads = list(self._connections), list(self._threads)
        for conn in connections:
            self._close(conn)
        for thread in threads:
            thread.join(5)


class FakeServer(_LoopbackServer):
    """Listens on 127.0.0.1:<ephemeral>; `requests` records every envelope received."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.handlers: Dict[str, Handler] = {}
        self.requests: List[RequestEnvelope] = []
        self._waits: Dict[bytes, threading.Event] = {}
        self._start_accepting()

    def _event(self, key: bytes) -> threading.Event:
        with self._lock:
            event = self._waits.setdefault(key, threading.Event())
            if self.stopped.is_set():
                event.set()
            return event

    def _serve_connection(self, conn: socket.socket) -> None:
        self._serve(conn, threading.Lock())

    def _serve(self, conn: socket.socket, write_lock: threading.Lock) -> None:
        stream = conn.makefile("rb")
        try:
            while True:
                header = stream.read(4)
                if len(header) < 4:
                    return
                request = RequestEnvelope.FromString(stream.read(HEADER.unpack(header)[0]))
                with self._lock:
                    self.requests.append(request)
                self._spawn(self._handle, conn, write_lock, request)
        except (OSError, ValueError):
            return
        finally:
            stream.close()

    def _handle(self, conn: socket.socket, write_lock: threading.Lock, request: RequestEnvelope) -> None:
        method, arg = request.method, request.payload
        response: Optional[ResponseEnvelope]
        if method in self.handlers:
            response = self.handlers[method](request)
        elif method == "/test/Echo":
            response = reply(request, arg)
        elif method == "/test/Wait":
            self._event(arg).wait(30)  # bounded: a broken test cannot hang the run
            response = reply(request, arg)
        elif method == "/test/Release":
            self._event(arg).set()
            response = reply(request, arg)
        elif method == "/test/Never":
            response = None
        elif method == "/test/Status":
            response = reply(request, code=int(arg), message=f"status {int(arg)}")
        elif method == "/test/Kill":
            response = ResponseEnvelope(call_id=0, status_code=int(arg), status_message="killed by test")
        elif method == "/test/Huge":
            self._send_raw(conn, write_lock, HEADER.pack(int(arg)))
            self._close(conn)
            return
        elif method == "/test/Close":
            self._close(conn)
            return
        else:
            response = reply(request, code=12, message=f"unknown method {method}")
        if response is not None:
            body = response.SerializeToString()
            self._send_raw(conn, write_lock, HEADER.pack(len(body)) + body)
        if method == "/test/Kill":
            self._close(conn)

    @staticmethod
    def _send_raw(conn: socket.socket, write_lock: threading.Lock, data: bytes) -> None:
        try:
            with write_lock:
                conn.sendall(data)
        except OSError:
            pass

    def release(self, key: bytes) -> None:
        self._event(key).set()

    def stop(self) -> None:
        with self._lock:
            self.stopped.set()
            for event in self._waits.values():
                event.set()
        self._close_all()


class RawPeer(_LoopbackServer):
    """A TCP server whose every connection runs `script(conn, stopped)` in a thread of its own:
    for peers that do not speak the lean protocol, or speak it wrong at the byte level (another
    protocol's reply, a TLS handshake trickled byte by byte, close_notify with TCP left open).
    `stopped` is set by stop(), which also closes every connection; a script should return
    when it is set (wait on it rather than sleep)."""

    def __init__(self, script: Callable[[socket.socket, threading.Event], None]) -> None:
        super().__init__()
        self._script = script
        self._start_accepting()

    def _serve_connection(self, conn: socket.socket) -> None:
        try:
            self._script(conn, self.stopped)
        except OSError:
            pass

    def stop(self) -> None:
        self._close_all()


def read_some(conn: socket.socket, stopped: threading.Event) -> bytes:
    """The next bytes from `conn` (b"" at its end, or once `stopped`), waiting at most 60 s."""
    conn.settimeout(0.1)
    for _ in range(600):
        if stopped.is_set():
            return b""
        try:
            return conn.recv(65536)
        except socket.timeout:
            continue
    return b""
