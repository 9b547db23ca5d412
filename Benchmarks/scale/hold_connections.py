#!/usr/bin/env python3
"""Opens COUNT idle TCP connections to HOST:PORT and holds them open.

Used by scripts/scale.sh. Prints `event=held opened=N failed=F seconds=S` on stdout
once every connection is open (or failed), then holds them until the file given by
--stop exists or --max-seconds pass, whichever comes first. Before exiting it checks
every socket without blocking and prints `event=released open=N closed_by_server=M`
(a socket the server closed reads as end-of-file). Sends nothing, so the server sees
connections that are established and silent. Every loop is bounded in count and time.

With --http2 each connection is an idle HTTP/2 client instead: it sends the client preface and
an empty SETTINGS frame right after connecting, and once all are open it acknowledges the
server's SETTINGS on every connection that sent them (within --connect-seconds) and then
stays silent; `event=held` also says `acked=N`. At release, a connection whose server sent
GOAWAY and closed reads as closed (its bytes are drained first).
"""
import argparse
import os
import select
import socket
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # + empty SETTINGS
SETTINGS_ACK = bytes([0, 0, 0, 4, 1, 0, 0, 0, 0])


def drain(sock: socket.socket) -> bool:
    """Reads what is waiting (bounded); False when the peer closed the connection."""
    for _ in range(64):
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if data == b"":
            return False
    return True


def acknowledge(sockets: list, deadline: float) -> int:
    """Sends SETTINGS ACK on each socket once the server's SETTINGS arrived; returns how many."""
    pending = {sock.fileno(): sock for sock in sockets}
    poller = select.poll()
    for fd in pending:
        poller.register(fd, select.POLLIN)
    acked = 0
    while pending and time.monotonic() < deadline:
        for fd, _ in poller.poll(100):
            sock = pending.pop(fd, None)
            if sock is None:
                continue
            poller.unregister(fd)
            if drain(sock):
                try:
                    sock.send(SETTINGS_ACK)
                    acked += 1
                except OSError:
                    pass
    return acked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--stop", required=True, help="hold until this file exists")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--connect-seconds", type=float, default=60.0, help="time limit for opening them all")
    parser.add_argument("--http2", action="store_true", help="idle HTTP/2 clients: preface + SETTINGS, then silent")
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("hold_connections: only loopback addresses are allowed", file=sys.stderr)
        return 2

    started = time.monotonic()
    deadline = started + args.max_seconds
    connect_deadline = started + args.connect_seconds
    sockets: list[socket.socket] = []
    failed = 0
    first_error = ""
    for _ in range(args.count):
        if time.monotonic() > connect_deadline:
            failed += args.count - len(sockets) - failed
            first_error = first_error or "connect time limit reached"
            break
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(5.0)
        try:
            sock.connect((args.host, args.port))
        except OSError as error:
            sock.close()
            failed += 1
            first_error = first_error or str(error)
            continue
        if args.http2:
            try:
                sock.sendall(PREFACE)
            except OSError as error:
                sock.close()
                failed += 1
                first_error = first_error or str(error)
                continue
        sock.setblocking(False)
        sockets.append(sock)
    acked = acknowledge(sockets, max(connect_deadline, time.monotonic() + 10)) if args.http2 else None
    opened_seconds = time.monotonic() - started
    print(f"event=held opened={len(sockets)} failed={failed} seconds={opened_seconds:.2f}"
          + (f" acked={acked}" if acked is not None else "")
          + (f" first_error={first_error!r}" if first_error else ""), flush=True)

    while time.monotonic() < deadline and not os.path.exists(args.stop):
        time.sleep(0.1)

    open_count, closed = 0, 0
    poller = select.poll()
    by_fd = {}
    for sock in sockets:
        poller.register(sock.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)
        by_fd[sock.fileno()] = sock
    ready = {fd for fd, _ in poller.poll(0)}
    for fd, sock in by_fd.items():
        if fd in ready:
            if args.http2:
                if not drain(sock):
                    closed += 1
                    continue
            else:
                try:
                    data = sock.recv(1)
                except BlockingIOError:
                    data = b"x"
                except OSError:
                    data = b""
                if data == b"":
                    closed += 1
                    continue
        open_count += 1
    print(f"event=released open={open_count} closed_by_server={closed}", flush=True)
    for sock in sockets:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
