"""End to end against the real larder-server (the Swift build) on an ephemeral port."""
from __future__ import annotations

import asyncio
import datetime as dt
import random
import signal
import socket
import struct
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
from google.protobuf.field_mask_pb2 import FieldMask

from larder_client import AsyncLarderClient, LarderError, StatusCode, to_datetime
from larder_client._gen.larder.rpc.v1.envelope_pb2 import RequestEnvelope, ResponseEnvelope
from larder_client.messages import (
    MEAL_CATEGORY_BREAKFAST, MEAL_CATEGORY_DINNER, MEAL_CATEGORY_LUNCH, MEAL_CATEGORY_SNACK,
    MEAL_CATEGORY_UNSPECIFIED, CategoryGroup, CreateLocationRequest, HealthCheckResponse, ItemCategory,
    Location, MealRecord, Metrics,
)

UTC = dt.timezone.utc

DEFAULT_GROUPS = {
    "食品": "#34C759", "電器": "#007AFF", "家具": "#763300", "消耗": "#253705", "衛生": "#900C3F",
    "護理": "#E6B800", "運動": "#2D3B5E", "文具": "#F04AA7", "寵物": "#AF52DE",
}
DEFAULT_CATEGORIES = {  # (group, name, icon)
    ("食品", "食品", "carrot.fill"), ("食品", "蔬果", "leaf.fill"), ("食品", "飲品", "cup.and.saucer.fill"),
    ("食品", "酒", "wineglass.fill"), ("電器", "電器", "lightbulb.fill"), ("家具", "家具", "bed.double.fill"),
    ("消耗", "消耗品", "minus.plus.batteryblock.stack.fill"), ("消耗", "清潔用品", "hands.and.sparkles"),
    ("衛生", "衛生用品", "bandage.fill"), ("護理", "面膜", "face.smiling"), ("運動", "腳踏車", "bicycle"),
    ("文具", "文具", "pencil"),
}
DEFAULT_LOCATIONS = {"客廳": "#FF5733", "廚房": "#33B5FF", "臥室": "#28A745", "浴室": "#FFC107"}


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@contextmanager
def raises_status(code: StatusCode, *fragments: str):
    with pytest.raises(LarderError) as info:
        yield info
    assert info.value.code is code, str(info.value)
    for fragment in fragments:
        assert fragment in info.value.message, str(info.value)


def is_uuid4(text: str) -> bool:
    return text == str(uuid.UUID(text)) and uuid.UUID(text).version == 4


def random_day() -> dt.datetime:
    """A day of its own in the past, so a test's meals do not mix with other tests' meals."""
    return dt.datetime(2001, 1, 1, tzinfo=UTC) + dt.timedelta(days=random.randrange(0, 9000))


# --- health and default data ---------------------------------------------------------------------

def test_health_check(client):
    assert client.check().status == HealthCheckResponse.SERVING
    assert client.health.check(service="").status == HealthCheckResponse.SERVING


def test_a_new_database_holds_exactly_the_default_data(server):
    with server.client() as client:
        groups = client.list_category_groups().category_groups
        assert {g.name: g.color_hex for g in groups} == DEFAULT_GROUPS
        assert len(groups) == 9
        group_names = {g.id: g.name for g in groups}
        categories = client.list_item_categories().item_categories
        assert len(categories) == 12
        assert {(group_names[c.category_group_id], c.name, c.icon_name) for c in categories} == DEFAULT_CATEGORIES
        locations = client.list_locations().locations
        assert {l.name: l.color_hex for l in locations} == DEFAULT_LOCATIONS
        assert len(locations) == 4
        pets = next(g for g in groups if g.name == "寵物")
        assert list(client.get_category_group(id=pets.id, include_item_categories=True).item_categories) == []
        food = next(g for g in groups if g.name == "食品")
        food_names = [c.name for c in client.get_category_group(id=food.id, include_item_categories=True).item_categories]
        assert sorted(food_names) == sorted(["食品", "蔬果", "飲品", "酒"]) and len(food_names) == 4
        assert all(is_uuid4(x.id) for x in [*groups, *categories, *locations])
        assert client.list_meal_records().meal_records == []


def test_no_seed_starts_empty(start_server):
    with start_server("--no-seed").client() as client:
        assert len(client.list_category_groups().category_groups) == 0
        assert len(client.list_item_categories().item_categories) == 0
        assert len(client.list_locations().locations) == 0


# --- CRUD ----------------------------------------------------------------------------------------

def test_location_crud(client):
    name = unique("玄關")
    created = client.create_location(location=Location(name=f"  {name} ", color_hex="#aabbcc"))
    assert is_uuid4(created.id)
    assert created.name == name  # trimmed
    assert created.color_hex == "#AABBCC"  # stored upper case
    assert created.create_time.seconds > 0 and created.update_time.seconds > 0
    assert client.get_location(id=created.id) == created
    assert created.id in {l.id for l in client.list_locations().locations}

    renamed = client.update_location(location={"id": created.id, "name": name + "改", "color_hex": "#000000"},
                                     update_mask=FieldMask(paths=["name"]))
    assert (renamed.name, renamed.color_hex) == (name + "改", "#AABBCC")  # color not in the mask
    replaced = client.update_location(location=Location(id=created.id, name=name, color_hex="#123456"))
    assert (replaced.name, replaced.color_hex) == (name, "#123456")  # no mask: all mutable fields
    assert replaced.create_time == created.create_time
    assert client.get_location(id=created.id) == replaced

    client.delete_location(id=created.id)
    with raises_status(StatusCode.NOT_FOUND, created.id):
        client.get_location(id=created.id)
    with raises_status(StatusCode.NOT_FOUND, created.id):
        client.delete_location(id=created.id)


def test_a_client_supplied_id_and_cjk_names_round_trip(client):
    chosen = str(uuid.uuid4())
    name = unique("儲藏室🧺")
    created = client.create_category_group(category_group=CategoryGroup(id=chosen, name=name, color_hex="#0a0B0c"))
    assert created.id == chosen
    fetched = client.get_category_group(id=chosen)
    assert fetched.name.encode("utf-8") == name.encode("utf-8")
    assert fetched.color_hex == "#0A0B0C"
    with raises_status(StatusCode.ALREADY_EXISTS, chosen):
        client.create_category_group(category_group=CategoryGroup(id=chosen, name=unique("other"), color_hex="#000000"))


def test_category_group_crud(client):
    created = client.create_category_group(category_group={"name": unique("group"), "color_hex": "#112233"})
    assert created.id in {g.id for g in client.list_category_groups().category_groups}
    updated = client.update_category_group(category_group={"id": created.id, "name": "ignored", "color_hex": "#445566"},
                                           update_mask={"paths": ["color_hex"]})
    assert (updated.name, updated.color_hex) == (created.name, "#445566")
    assert client.get_category_group(id=created.id) == updated
    client.delete_category_group(id=created.id)
    with raises_status(StatusCode.NOT_FOUND):
        client.get_category_group(id=created.id)


def test_item_category_crud_and_the_group_relationship(client):
    group_a = client.create_category_group(category_group={"name": unique("A"), "color_hex": "#111111"})
    group_b = client.create_category_group(category_group={"name": unique("B"), "color_hex": "#222222"})
    names = ["蔬菜", "apple", "Zucchini", "banana"]
    created = [client.create_item_category(item_category=ItemCategory(
        name=n, icon_name="leaf.fill", category_group_id=group_a.id)) for n in names]
    assert all(is_uuid4(c.id) and c.category_group_id == group_a.id for c in created)

    listed = client.list_item_categories(category_group_id=group_a.id).item_categories
    assert sorted(c.name for c in listed) == sorted(names)
    assert [c.name for c in listed] == sorted((c.name for c in listed), key=lambda n: n.encode())  # by name
    with_children = client.get_category_group(id=group_a.id, include_item_categories=True)
    assert [c.name for c in with_children.item_categories] == [c.name for c in listed]
    assert list(client.get_category_group(id=group_a.id).item_categories) == []  # only when asked

    moved = client.update_item_category(item_category={"id": created[0].id, "category_group_id": group_b.id},
                                        update_mask={"paths": ["category_group_id"]})
    assert (moved.name, moved.icon_name, moved.category_group_id) == ("蔬菜", "leaf.fill", group_b.id)
    assert [c.id for c in client.list_item_categories(category_group_id=group_b.id).item_categories] == [moved.id]
    renamed = client.update_item_category(item_category=ItemCategory(
        id=moved.id, name="根菜", icon_name="carrot.fill", category_group_id=group_b.id))
    assert client.get_item_category(id=moved.id) == renamed
    assert (renamed.name, renamed.icon_name) == ("根菜", "carrot.fill")
    # the same name is fine in another group, not in the same one
    client.create_item_category(item_category={"name": "apple", "icon_name": "leaf", "category_group_id": group_b.id})
    with raises_status(StatusCode.ALREADY_EXISTS, "apple"):
        client.create_item_category(item_category={"name": "apple", "icon_name": "leaf",
                                                   "category_group_id": group_a.id})

    client.delete_item_category(id=renamed.id)
    with raises_status(StatusCode.NOT_FOUND):
        client.get_item_category(id=renamed.id)
    with raises_status(StatusCode.FAILED_PRECONDITION, group_a.id):
        client.delete_category_group(id=group_a.id)
    client.delete_category_group(id=group_a.id, cascade=True)
    for category in created[1:]:
        with raises_status(StatusCode.NOT_FOUND):
            client.get_item_category(id=category.id)
    client.delete_category_group(id=group_b.id, cascade=True)


def test_meal_record_crud(client):
    eaten = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    created = client.create_meal_record(meal_record=MealRecord(
        name="Oatmeal 燕麥", calories=350, category=MEAL_CATEGORY_BREAKFAST, eaten_at=eaten))
    assert is_uuid4(created.id)
    assert created.eaten_at.ToDatetime(UTC) == eaten
    assert (created.calories, created.category) == (350, MEAL_CATEGORY_BREAKFAST)
    assert client.get_meal_record(id=created.id) == created
    updated = client.update_meal_record(meal_record={"id": created.id, "calories": 420, "name": "x"},
                                        update_mask={"paths": ["calories"]})
    assert (updated.name, updated.calories, updated.category) == ("Oatmeal 燕麥", 420, MEAL_CATEGORY_BREAKFAST)
    client.delete_meal_record(id=created.id)
    with raises_status(StatusCode.NOT_FOUND):
        client.get_meal_record(id=created.id)


def test_eaten_at_defaults_to_the_server_clock(client):
    before = dt.datetime.now(UTC) - dt.timedelta(seconds=5)
    created = client.create_meal_record(meal_record={"name": "tea", "calories": 0, "category": "MEAL_CATEGORY_SNACK"})
    after = dt.datetime.now(UTC) + dt.timedelta(seconds=5)
    assert before <= created.eaten_at.ToDatetime(UTC) <= after
    client.delete_meal_record(id=created.id)


# --- error statuses ------------------------------------------------------------------------------

def test_invalid_argument(client):
    with raises_status(StatusCode.INVALID_ARGUMENT, "color_hex"):
        client.create_location(location={"name": unique("x"), "color_hex": "red"})
    with raises_status(StatusCode.INVALID_ARGUMENT, "name"):
        client.create_location(location={"name": "   ", "color_hex": "#000000"})
    with raises_status(StatusCode.INVALID_ARGUMENT, "name"):
        client.create_category_group(category_group={"name": "x" * 101, "color_hex": "#000000"})
    with raises_status(StatusCode.INVALID_ARGUMENT, "calories"):
        client.create_meal_record(meal_record={"name": "x", "calories": 100001, "category": MEAL_CATEGORY_LUNCH})
    with raises_status(StatusCode.INVALID_ARGUMENT, "category"):
        client.create_meal_record(meal_record={"name": "x", "calories": 1, "category": MEAL_CATEGORY_UNSPECIFIED})
    with raises_status(StatusCode.INVALID_ARGUMENT):  # an undecodable payload
        client.call("/larder.v1.LocationService/GetLocation", b"\xff\xff\xff\xff")
    with raises_status(StatusCode.INVALID_ARGUMENT):
        client.get_location(id="not-a-uuid")


def test_not_found(client):
    missing = str(uuid.uuid4())
    for call in (client.get_location, client.get_category_group, client.get_item_category, client.get_meal_record,
                 client.delete_location, client.delete_meal_record):
        with raises_status(StatusCode.NOT_FOUND, missing):
            call(id=missing)


def test_already_exists(client):
    name = unique("房間")
    client.create_location(location={"name": name, "color_hex": "#000000"})
    with raises_status(StatusCode.ALREADY_EXISTS, name):
        client.create_location(location={"name": name, "color_hex": "#FFFFFF"})
    group = unique("群組")
    client.create_category_group(category_group={"name": group, "color_hex": "#000000"})
    with raises_status(StatusCode.ALREADY_EXISTS, group):
        client.create_category_group(category_group={"name": group, "color_hex": "#000000"})


def test_failed_precondition_for_a_missing_group(client):
    missing = str(uuid.uuid4())
    with raises_status(StatusCode.FAILED_PRECONDITION, missing):
        client.create_item_category(item_category={"name": "x", "icon_name": "x", "category_group_id": missing})


def test_unimplemented(client):
    with raises_status(StatusCode.UNIMPLEMENTED, "/larder.v1.LocationService/Teleport"):
        client.call("/larder.v1.LocationService/Teleport", b"")
    with raises_status(StatusCode.UNIMPLEMENTED):
        client.call("/nope.v1.Nothing/Here", CreateLocationRequest())


def test_deadline_exceeded_while_the_server_is_stopped(server):
    """Client-side deadline: the server process is frozen (SIGSTOP) and cannot answer."""
    with server.client() as client:
        assert len(client.list_locations().locations) == 4
        server.signal(signal.SIGSTOP)
        try:
            with raises_status(StatusCode.DEADLINE_EXCEEDED, "ListLocations"):
                client.list_locations(timeout=0.2)
        finally:
            server.signal(signal.SIGCONT)
        # The late reply is dropped; the connection goes on.
        assert len(client.list_locations(timeout=30).locations) == 4


def test_deadline_exceeded_from_the_server_for_an_unfinished_frame(start_server):
    """Server-side DEADLINE_EXCEEDED: a frame started but not finished within --frame-timeout."""
    server = start_server("--frame-timeout", "1")
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(struct.pack(">I", 100) + b"\x08")
        code, message = read_connection_error(sock)
    assert code == StatusCode.DEADLINE_EXCEEDED, message


# --- pagination and summaries --------------------------------------------------------------------

def test_meal_records_paginate_by_keyset_newest_first(client):
    day = random_day()
    times = [day + dt.timedelta(hours=h) for h in (8, 12, 12, 13, 18, 19, 22)]  # two share 12:00
    ids = {client.create_meal_record(meal_record={"name": f"m{i}", "calories": 100 + i,
                                                  "category": MEAL_CATEGORY_LUNCH, "eaten_at": t}).id
           for i, t in enumerate(times)}
    window = {"start_time": day, "end_time": day + dt.timedelta(days=1)}

    pages, token = [], ""
    for _ in range(10):  # bounded
        page = client.list_meal_records(page_size=3, page_token=token, **window)
        pages.append(list(page.meal_records))
        if len(pages) == 1:  # a newer meal inserted mid-way must not shift later pages
            client.create_meal_record(meal_record={"name": "late", "calories": 1, "category": MEAL_CATEGORY_SNACK,
                                                   "eaten_at": day + dt.timedelta(hours=23)})
        token = page.next_page_token
        if not token:
            break
    assert [len(p) for p in pages] == [3, 3, 1]
    records = [r for p in pages for r in p]
    assert {r.id for r in records} == ids and len(records) == len(ids)
    keys = [(r.eaten_at.ToDatetime(UTC), r.id) for r in records]
    assert keys == sorted(keys, reverse=True)  # eaten_at desc, then id desc

    everything = client.list_meal_records(**window)  # default page size holds them all
    assert len(everything.meal_records) == 8 and everything.next_page_token == ""
    snacks = client.list_meal_records(category=MEAL_CATEGORY_SNACK, **window).meal_records
    assert [r.name for r in snacks] == ["late"]
    with raises_status(StatusCode.INVALID_ARGUMENT):
        client.list_meal_records(page_token="garbage!", **window)


def test_summary_by_local_day_and_category(client):
    day = random_day()  # midnight UTC = 08:00 at UTC+08:00
    meals = [(day + dt.timedelta(hours=1), 300, MEAL_CATEGORY_BREAKFAST),   # local day 1, 09:00
             (day + dt.timedelta(hours=5), 700, MEAL_CATEGORY_LUNCH),       # local day 1, 13:00
             (day + dt.timedelta(hours=17), 200, MEAL_CATEGORY_SNACK),      # local day 2, 01:00
             (day + dt.timedelta(hours=23), 500, MEAL_CATEGORY_DINNER)]     # local day 2, 07:00
    for at, calories, category in meals:
        client.create_meal_record(meal_record={"name": "s", "calories": calories, "category": category, "eaten_at": at})
    summary = client.summarize_meal_records(start_time=day, end_time=day + dt.timedelta(days=1),
                                            utc_offset_minutes=480)
    local = (day + dt.timedelta(hours=8)).date()
    assert [(d.date, d.total_calories, d.meal_count) for d in summary.days] == [
        (local.isoformat(), 1000, 2), ((local + dt.timedelta(days=1)).isoformat(), 700, 2)]
    assert [(c.category, c.total_calories) for c in summary.days[0].categories] == [
        (MEAL_CATEGORY_BREAKFAST, 300), (MEAL_CATEGORY_LUNCH, 700)]
    assert (summary.total_calories, summary.meal_count) == (1700, 4)
    assert [c.category for c in summary.categories] == [MEAL_CATEGORY_BREAKFAST, MEAL_CATEGORY_LUNCH,
                                                        MEAL_CATEGORY_DINNER, MEAL_CATEGORY_SNACK]


# --- concurrency ---------------------------------------------------------------------------------

def test_many_threads_share_one_connection(client):
    prefix = unique("thread")

    def worker(n: int):
        mine = []
        for i in range(10):
            location = client.create_location(location={"name": f"{prefix}-{n}-{i}", "color_hex": "#010203"})
            assert client.get_location(id=location.id).name == f"{prefix}-{n}-{i}"
            mine.append(location.id)
        return mine

    with ThreadPoolExecutor(max_workers=16) as pool:
        ids = [i for chunk in pool.map(worker, range(16)) for i in chunk]
    assert len(set(ids)) == 160
    listed = {l.id for l in client.list_locations().locations if l.name.startswith(prefix)}
    assert listed == set(ids)


def test_hundreds_of_calls_in_flight_on_one_connection(client):
    day = random_day()
    futures = [client.create_meal_record.future(meal_record={
        "name": f"f{i}", "calories": i, "category": MEAL_CATEGORY_DINNER,
        "eaten_at": day + dt.timedelta(seconds=i)}) for i in range(300)]
    reads = [client.list_locations.future() for _ in range(100)]
    created = [f.result(60) for f in futures]
    assert [r.calories for r in created] == list(range(300))
    assert all(len(f.result(60).locations) >= 4 for f in reads)
    listed = client.list_meal_records(page_size=1000, start_time=day, end_time=day + dt.timedelta(days=1))
    assert len(listed.meal_records) == 300


def test_async_client_against_the_server(shared_server):
    async def main():
        async with await AsyncLarderClient.connect(shared_server.address, timeout=30) as client:
            assert (await client.check()).status == HealthCheckResponse.SERVING
            name = unique("async")
            created = await client.create_location(location={"name": name, "color_hex": "#ABCDEF"})
            fetched = await asyncio.gather(*(client.get_location(id=created.id) for _ in range(50)))
            assert all(f == created for f in fetched)
            with raises_status(StatusCode.ALREADY_EXISTS):
                await client.create_location(location={"name": name, "color_hex": "#ABCDEF"})

    asyncio.run(main())


# --- the server closing the connection ------------------------------------------------------------

def read_connection_error(sock: socket.socket):
    """Reads frames until a call_id 0 reply; checks the server then closes. Returns (code, message)."""
    stream = sock.makefile("rb")
    for _ in range(100):
        header = stream.read(4)
        assert len(header) == 4, "connection closed without a call_id 0 reply"
        env = ResponseEnvelope.FromString(stream.read(struct.unpack(">I", header)[0]))
        if env.call_id == 0:
            assert stream.read(1) == b"", "the server must close after a call_id 0 reply"
            return StatusCode(env.status_code), env.status_message
    raise AssertionError("no call_id 0 reply")


def test_a_frame_over_the_maximum_gets_a_connection_error(shared_server, client):
    with socket.create_connection((shared_server.host, shared_server.port), timeout=30) as sock:
        sock.sendall(struct.pack(">I", 4 * 1024 * 1024 + 1))
        code, message = read_connection_error(sock)
    assert code == StatusCode.RESOURCE_EXHAUSTED, message
    assert client.check().status == HealthCheckResponse.SERVING  # other connections are not disturbed


def test_an_undecodable_envelope_gets_a_connection_error(shared_server):
    with socket.create_connection((shared_server.host, shared_server.port), timeout=30) as sock:
        sock.sendall(struct.pack(">I", 3) + b"\xff\xff\xff")
        code, message = read_connection_error(sock)
    assert code == StatusCode.INVALID_ARGUMENT, message


def test_call_id_zero_is_rejected(shared_server):
    body = RequestEnvelope(call_id=0, method="/grpc.health.v1.Health/Check").SerializeToString()
    with socket.create_connection((shared_server.host, shared_server.port), timeout=30) as sock:
        sock.sendall(struct.pack(">I", len(body)) + body)
        code, message = read_connection_error(sock)
    assert code == StatusCode.INVALID_ARGUMENT and "call_id" in message


def test_pending_calls_fail_when_the_server_rejects_a_frame(start_server):
    server = start_server("--max-frame-bytes", "1024")
    with server.client() as client:
        with raises_status(StatusCode.RESOURCE_EXHAUSTED):
            client.create_location(location={"name": "x" * 2000, "color_hex": "#000000"})
        assert client.connection is not None and client.connection.closed is not None  # the server closed it
        assert client.check().status == HealthCheckResponse.SERVING  # on a new connection
        assert client.connects == 2


def test_sigterm_closes_connections_and_later_calls_are_unavailable(server):
    with server.client() as client:
        assert client.check().status == HealthCheckResponse.SERVING
        server.signal(signal.SIGTERM)
        assert server.wait(120) == 0
        with raises_status(StatusCode.UNAVAILABLE, server.address):
            client.check()
    with raises_status(StatusCode.UNAVAILABLE, server.address):
        server.client()


def test_data_survives_a_restart(start_server, tmp_path):
    first = start_server(db=tmp_path / "larder.sqlite")
    with first.client() as client:
        created = client.create_location(location={"name": "地下室", "color_hex": "#0F0F0F"})
        client.delete_location(id=next(l.id for l in client.list_locations().locations if l.name == "客廳"))
    first.signal(signal.SIGTERM)
    assert first.wait(120) == 0
    second = start_server(db=tmp_path / "larder.sqlite")
    with second.client() as client:
        names = {l.name for l in client.list_locations().locations}
        assert client.get_location(id=created.id) == created
    assert names == {"地下室", "廚房", "臥室", "浴室"}  # the defaults are not seeded again


def test_a_call_pending_at_sigterm_is_answered_or_unavailable(server):
    with server.client() as client:
        # A call first: the server installs its signal handlers only after logging event=listening.
        assert client.check().status == HealthCheckResponse.SERVING
        server.signal(signal.SIGSTOP)
        pending = client.list_locations.future()  # sits in the socket until the server runs again
        server.signal(signal.SIGTERM)
        server.signal(signal.SIGCONT)
        try:
            assert len(pending.result(30).locations) == 4  # finished while draining
        except LarderError as e:
            assert e.code is StatusCode.UNAVAILABLE, str(e)  # or refused as the server shuts down
        assert server.wait(120) == 0
        with raises_status(StatusCode.UNAVAILABLE):
            client.check()


# --- the typed API: page iterators, admin and reflection, datetimes ------------------------------

def test_iter_meal_records_follows_every_page(client):
    day = random_day()
    created = [client.create_meal_record(meal_record={"name": f"it{i}", "calories": i, "category": MEAL_CATEGORY_LUNCH,
                                                      "eaten_at": day + dt.timedelta(minutes=i)}) for i in range(7)]
    seen = list(client.iter_meal_records(since=day, until=day + dt.timedelta(days=1), page_size=2))
    assert [m.id for m in seen] == [m.id for m in reversed(created)]  # newest first, across 4 pages
    lunches = client.meal_record_service.iter_meal_records(since=day + dt.timedelta(minutes=5), page_size=1,
                                                           until=day + dt.timedelta(days=1),
                                                           category=MEAL_CATEGORY_LUNCH)
    assert [m.name for m in lunches] == ["it6", "it5"]
    assert list(client.iter_meal_records(since=day - dt.timedelta(hours=1), until=day, page_size=3)) == []


def test_name_sorted_lists_page_by_name_and_iterators_follow_them(client):
    prefix = unique("pg")
    names = sorted(f"{prefix} {i:02}" for i in range(7))
    for name in reversed(names):
        client.create_location(location={"name": name, "color_hex": "#102030"})
    mine = lambda rows: [r.name for r in rows if r.name.startswith(prefix)]  # noqa: E731
    assert mine(client.iter_locations(page_size=2)) == names  # every page, in name order
    assert mine(client.iter_locations()) == names  # 1000 a page
    first = client.list_locations(page_size=3)
    assert len(first.locations) == 3 and first.next_page_token
    rest = client.list_locations(page_token=first.next_page_token)  # page_size 0: all the rest at once
    assert not rest.next_page_token
    whole = client.list_locations()
    assert not whole.next_page_token and [*first.locations, *rest.locations] == list(whole.locations)

    group = client.create_category_group(category_group={"name": prefix, "color_hex": "#102030"})
    other = client.create_category_group(category_group={"name": prefix + " other", "color_hex": "#102030"})
    for name in names:
        client.create_item_category(item_category={"name": name, "icon_name": "box", "category_group_id": group.id})
    client.create_item_category(item_category={"name": names[0], "icon_name": "box", "category_group_id": other.id})
    assert mine(client.iter_item_categories(category_group_id=group.id, page_size=3)) == names
    assert mine(client.iter_category_groups(page_size=1)) == [prefix, prefix + " other"]
    page = client.list_item_categories(category_group_id=group.id, page_size=3)
    with pytest.raises(LarderError) as other_group:
        client.list_item_categories(category_group_id=other.id, page_size=3, page_token=page.next_page_token)
    assert other_group.value.code is StatusCode.INVALID_ARGUMENT
    assert "issued for another category_group_id" in other_group.value.message
    with pytest.raises(LarderError) as other_method:
        client.list_locations(page_size=3, page_token=page.next_page_token)
    assert "issued by another method" in other_method.value.message
    with pytest.raises(LarderError) as negative:
        client.list_category_groups(page_size=-1)
    assert negative.value.code is StatusCode.INVALID_ARGUMENT and "page_size must not be negative" in negative.value.message


def test_a_value_of_the_wrong_type_names_its_field(client):
    with pytest.raises(TypeError, match=r"^larder\.v1\.GetLocationRequest\.id: .* \(got int 5\)$"):
        client.get_location(id=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^larder\.v1\.Location\.name: .* \(got int 7\)$"):
        client.create_location(location={"name": 7, "color_hex": "#000000"})  # type: ignore[typeddict-item]
    with pytest.raises(ValueError, match=r"^larder\.v1\.ListMealRecordsRequest\.page_size: "):
        client.list_meal_records(page_size=2**40)


def test_naive_datetimes_are_refused_and_aware_ones_kept(client):
    with pytest.raises(TypeError, match="naive datetime"):
        client.create_meal_record(meal_record={"name": "x", "calories": 1, "category": MEAL_CATEGORY_LUNCH,
                                               "eaten_at": dt.datetime(2024, 1, 1, 12, 0)})
    with pytest.raises(TypeError, match="naive datetime"):
        next(client.iter_meal_records(since=dt.datetime(2024, 1, 1)))
    taipei = dt.timezone(dt.timedelta(hours=8))
    eaten = dt.datetime(2024, 1, 1, 20, 0, tzinfo=taipei)  # 12:00 UTC
    meal = client.create_meal_record(meal_record={"name": "x", "calories": 1, "category": MEAL_CATEGORY_LUNCH,
                                                  "eaten_at": eaten})
    out = to_datetime(meal.eaten_at)
    assert out == eaten and out.tzinfo is UTC and out.hour == 12
    assert to_datetime(meal.eaten_at, taipei).hour == 20
    client.delete_meal_record(id=meal.id)


def test_admin_and_reflection_methods_return_messages(client):
    metrics = client.get_metrics()
    assert isinstance(metrics, Metrics) and metrics.connections_open >= 1
    assert to_datetime(metrics.start_time) <= dt.datetime.now(UTC)
    assert metrics is not None and client.admin.get_metrics().connections_accepted >= 1
    services = {s.name: [m.name for m in s.methods] for s in client.list_services().services}
    assert services["larder.v1.LocationService"][:2] == ["CreateLocation", "GetLocation"]
    described = client.server_reflection.describe_type(name="larder.v1.Location")
    assert described.WhichOneof("type") == "message_type"
    assert [f.name for f in described.message_type.fields][:3] == ["id", "name", "color_hex"]


def test_async_client_as_a_context_manager_with_iterators(shared_server):
    async def main():
        day = random_day()
        async with AsyncLarderClient(shared_server.address, timeout=30) as client:
            for i in range(5):
                await client.create_meal_record(meal_record={"name": f"a{i}", "calories": i, "eaten_at":
                                                             day + dt.timedelta(hours=i),
                                                             "category": MEAL_CATEGORY_SNACK})
            names = [m.name async for m in client.iter_meal_records(since=day, until=day + dt.timedelta(days=1),
                                                                    page_size=2)]
            assert names == ["a4", "a3", "a2", "a1", "a0"]
            assert (await client.get_metrics()).connections_open >= 1
        assert not client.connected

    asyncio.run(main())
