"""SIGKILL under write load from grpcio: no write a stock gRPC client saw acknowledged is lost.

The lean protocol has the same check in Swift (CrashSafetyEndToEndTests); this one holds the
gRPC-over-HTTP/2 transport to it: an OK that reached the client means the write was committed,
whatever happens to the server a moment later.
"""
from __future__ import annotations

import random
import sqlite3
import threading
import time
import uuid
from concurrent import futures
from pathlib import Path
from typing import Callable, Set

import grpc
from google.protobuf import timestamp_pb2

from interop_support import Stubs
from server_process import RunningServer

TIMEOUT = 60  # seconds: a bound for calls on a busy machine, never a speed expectation
ROUNDS = 3
WRITERS = 8


class Acknowledged:
    """What the writers saw answered OK, shared between their threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.created: Set[str] = set()
        self.deleting: Set[str] = set()  # deletes sent: committed or not is unknown when unanswered
        self.deleted: Set[str] = set()

    def count(self) -> int:
        with self.lock:
            return len(self.created)


def integrity_check(db: Path) -> str:
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return "\n".join(row[0] for row in connection.execute("PRAGMA integrity_check"))
    finally:
        connection.close()


def write_until_killed(stubs: Stubs, server: RunningServer, round_number: int, seen: Acknowledged) -> int:
    """Creates (and deletes every third) meal records from WRITERS threads until the server is
    SIGKILLed at a random moment; returns how many creates this round saw acknowledged."""
    pb = stubs.meal_record_pb2
    common = stubs.common_pb2
    acknowledged_before = seen.count()
    with grpc.insecure_channel(server.address) as channel:
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
        meals = stubs.meal_record_pb2_grpc.MealRecordServiceStub(channel)

        def writer(worker: int) -> None:
            for index in range(100_000):  # bounded: the server dies long before
                record_id = str(uuid.uuid4())
                try:
                    meals.CreateMealRecord(pb.CreateMealRecordRequest(meal_record=pb.MealRecord(
                        id=record_id, name=f"r{round_number} w{worker} #{index}", calories=1,
                        category=common.MEAL_CATEGORY_SNACK,
                        eaten_at=timestamp_pb2.Timestamp(seconds=1_767_225_600 + index))), timeout=TIMEOUT)
                    with seen.lock:
                        seen.created.add(record_id)
                    if index % 3 == 0:
                        with seen.lock:
                            seen.deleting.add(record_id)
                        meals.DeleteMealRecord(pb.DeleteMealRecordRequest(id=record_id), timeout=TIMEOUT)
                        with seen.lock:
                            seen.deleted.add(record_id)
                except grpc.RpcError as error:
                    # The server is gone: a call in flight at the kill has no answer.
                    assert error.code() == grpc.StatusCode.UNAVAILABLE, (error.code(), error.details())
                    return

        with futures.ThreadPoolExecutor(WRITERS) as pool:
            workers = [pool.submit(writer, w) for w in range(WRITERS)]
            deadline = time.monotonic() + TIMEOUT
            while seen.count() < acknowledged_before + 30 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(random.uniform(0, 0.4))
            server.process.kill()
            server.process.wait(TIMEOUT)
            for worker in workers:
                worker.result(timeout=TIMEOUT * 2)
    return seen.count() - acknowledged_before


def stored_meal_ids(stubs: Stubs, server: RunningServer) -> Set[str]:
    pb = stubs.meal_record_pb2
    ids: Set[str] = set()
    with grpc.insecure_channel(server.address) as channel:
        meals = stubs.meal_record_pb2_grpc.MealRecordServiceStub(channel)
        token = ""
        for _ in range(1_000):
            page = meals.ListMealRecords(pb.ListMealRecordsRequest(page_size=1000, page_token=token),
                                         timeout=TIMEOUT, wait_for_ready=True)
            ids.update(record.id for record in page.meal_records)
            token = page.next_page_token
            if not token:
                break
    return ids


def test_sigkill_under_grpc_write_load_loses_no_acknowledged_write(
        stubs: Stubs, start_server: Callable[..., RunningServer]) -> None:
    server = start_server()  # default durability
    seen = Acknowledged()
    for round_number in range(1, ROUNDS + 1):
        if round_number > 1:
            server = start_server(db=server.db)
        acknowledged = write_until_killed(stubs, server, round_number, seen)
        assert acknowledged > 0, f"round {round_number}: no write was acknowledged before the kill"
        assert integrity_check(server.db) == "ok", f"round {round_number}: the database as the kill left it"

        restarted = start_server(db=server.db)
        stored = stored_meal_ids(stubs, restarted)
        with seen.lock:
            lost = seen.created - seen.deleting - stored
            resurrected = seen.deleted & stored
        assert not lost, f"round {round_number}: {len(lost)} acknowledged creates missing"
        assert not resurrected, f"round {round_number}: {len(resurrected)} acknowledged deletes undone"
        restarted.stop()
        server = restarted
    assert integrity_check(server.db) == "ok"
