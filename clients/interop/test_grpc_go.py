"""grpc-go (Go's stock gRPC stack, Debian's 1.33.3) against larder-server over gRPC on HTTP/2.

A Go program, clients/interop/go/larder_interop (main.go and a file per group of scenarios),
built once per session: the Go code is generated from proto/ at the start of the run by
protoc-gen-go and protoc-gen-go-grpc into a temporary GOPATH (never checked in), exactly as a Go
user generates theirs, and built in GOPATH mode against Debian's sources in /usr/share/gocode
(no module downloads: GO111MODULE=off, GOPROXY=off), as scripts/check-proto-languages.sh builds
them. Health and v1alpha reflection use grpc-go's own packages
(google.golang.org/grpc/health/grpc_health_v1, .../reflection/grpc_reflection_v1alpha);
grpc/reflection/v1 (which grpc-go 1.33 lacks) is generated from proto/ under an import path of
ours so it does not shadow grpc-go's.

Each scenario is one run of the program (bounded in time), which writes what grpc-go saw as
JSON lines; the assertions are here, against what the test sent, what proto/ declares (protoc's
parse of it), what the lean protocol answers for the same request bytes
(interop_support.lean_call), and what the server's own metrics and log say.
"""
from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple
from zoneinfo import ZoneInfo

import grpc
import pytest
from google.protobuf import descriptor_pb2

import tls_certificates
from grpc_stubs import PROTO_DIR
from interop_support import lean_call, lean_calls, unique
from server_process import RunningServer

TIMEOUT = 60  # seconds: the bound on each run of the Go program, never a speed expectation
LONG_TIMEOUT = 300  # the runs that wait on purpose (keepalive) or make thousands of calls
BUILD_TIMEOUT = 900  # generating and building (a cold build compiles grpc-go: ~20 s on 2 cores)
GO_SOURCE = Path(__file__).resolve().parent / "go" / "larder_interop"
GOCODE = Path("/usr/share/gocode")  # Debian's Go sources (golang-google-{grpc,protobuf}-dev, ...)
UUID_V4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
STATUS_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}
DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024  # larder-server --help


# ---------------------------------------------------------------------------------------------
# Building and running the Go program


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not on PATH: scripts/install-deps.sh installs it (Debian packages golang-go, "
                    "protobuf-compiler, protoc-gen-go, protoc-gen-go-grpc, golang-google-grpc-dev, "
                    "golang-google-protobuf-dev, golang-github-golang-protobuf-1-5-dev)")
    return path


def _go_environment(gopath: Path, cache: Path) -> Dict[str, str]:
    env = dict(os.environ)
    env.update(GO111MODULE="off", GOPATH=f"{gopath}:{GOCODE}", GOFLAGS="", GOPROXY="off")
    if not (env.get("GOCACHE") or env.get("XDG_CACHE_HOME") or env.get("HOME")):
        env["GOCACHE"] = str(cache)  # go needs a build cache; the user's when there is one
    return env


def generate_go(out: Path) -> None:
    """protoc-gen-go and protoc-gen-go-grpc output for every file of proto/, by import path
    (go_package) under out. grpc/* files carry grpc-go's own go_package, which a GOPATH entry of
    ours would shadow whole: they are mapped (M option) to larder.interop/<dir>, as
    scripts/check-proto-languages.sh maps them."""
    protos = sorted(str(p.relative_to(PROTO_DIR)) for p in PROTO_DIR.rglob("*.proto"))
    mapping = ",".join(f"M{f}=larder.interop/{Path(f).parent};{str(Path(f).parent).replace('/', '_')}"
                       for f in protos if f.startswith("grpc/"))
    out.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [_need("protoc"), "--fatal_warnings", f"--proto_path={PROTO_DIR}", "--proto_path=/usr/include",
         f"--plugin=protoc-gen-go={_need('protoc-gen-go')}", f"--plugin=protoc-gen-go-grpc={_need('protoc-gen-go-grpc')}",
         f"--go_out={out}", f"--go_opt={mapping}", f"--go-grpc_out={out}", f"--go-grpc_opt={mapping}", *protos],
        capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        pytest.fail(f"protoc --go_out --go-grpc_out failed ({result.returncode}):\n{result.stderr}")


@pytest.fixture(scope="session")
def go_client(tmp_path_factory: pytest.TempPathFactory) -> "GoClient":
    go = _need("go")
    if not (GOCODE / "src" / "google.golang.org" / "grpc").is_dir():
        pytest.fail(f"grpc-go's sources are not in {GOCODE}: install golang-google-grpc-dev (scripts/install-deps.sh)")
    if (GOCODE / "src" / "github.com" / "golang" / "protobuf" / "proto" / "table_marshal.go").exists():
        # Debian's golang-github-golang-protobuf-1-3-dev: grpc-go's codec marshals through it, and
        # 1.3 predates the generated code's API (v2): it drops unknown fields and panics on oneofs.
        # grpc-go 1.33's own go.mod requires 1.4 or later; Debian has 1.5.
        pytest.fail("github.com/golang/protobuf in /usr/share/gocode is 1.3 (golang-github-golang-protobuf-1-3-dev), "
                    "which cannot marshal the messages protoc-gen-go 1.28 generates: install "
                    "golang-github-golang-protobuf-1-5-dev (scripts/install-deps.sh does)")
    root = tmp_path_factory.mktemp("grpc-go")
    gopath = root / "gopath"
    generate_go(gopath / "src")
    binary = root / "larder_interop"
    env = _go_environment(gopath, root / "gocache")
    try:
        built = subprocess.run([go, "build", "-o", str(binary), "."], cwd=GO_SOURCE, env=env,
                               capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"go build of {GO_SOURCE} did not finish within {BUILD_TIMEOUT} s")
    if built.returncode != 0:
        pytest.fail(f"go build of {GO_SOURCE} failed ({built.returncode}):\n{built.stdout}\n{built.stderr}")
    return GoClient(binary)


class Steps:
    """One run's output: a JSON object per line, each with a "step" name."""

    def __init__(self, args: Sequence[str], stdout: str, stderr: str) -> None:
        self.args = list(args)
        self.stderr = stderr
        self.lines: List[Dict[str, Any]] = [json.loads(line) for line in stdout.splitlines() if line.strip()]

    def __str__(self) -> str:
        shown = "\n".join(json.dumps({k: v for k, v in s.items() if k != "request_hex"})[:600] for s in self.lines)
        return f"{' '.join(self.args)}\n{shown}\nstderr:\n{self.stderr[-4000:]}"

    __repr__ = __str__

    def __getitem__(self, name: str) -> Dict[str, Any]:
        found = [s for s in self.lines if s.get("step") == name]
        assert len(found) == 1, f"{len(found)} steps named {name!r} in\n{self}"
        return found[0]

    def named(self, prefix: str) -> List[Dict[str, Any]]:
        return [s for s in self.lines if str(s.get("step", "")).startswith(prefix)]

    def code(self, name: str) -> grpc.StatusCode:
        return STATUS_BY_NUMBER[int(self[name]["code"])]

    def ok(self, name: str) -> Any:
        """The reply of a call that must have succeeded."""
        step = self[name]
        assert step["code"] == 0, f"{name}: {step['code_name']}: {step['message']}\n{self}"
        return step["reply"]

    def failed(self, name: str, expected: grpc.StatusCode) -> str:
        """The message of a call that must have failed with expected."""
        step = self[name]
        assert step["code"] == expected.value[0], f"{name}: {step['code_name']}: {step['message']}, not {expected}\n{self}"
        return str(step["message"])


class GoClient:
    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def command(self, address: str, scenario: str, *args: str, token: Optional[str] = None) -> List[str]:
        return [str(self.binary), "-addr", address, *(["-token", token] if token else []), scenario, *args]

    def run(self, address: str, scenario: str, *args: str, token: Optional[str] = None,
            timeout: float = TIMEOUT) -> Steps:
        command = self.command(address, scenario, *args, token=token)
        result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        steps = Steps(command, result.stdout, result.stderr)
        assert result.returncode == 0, f"exit {result.returncode}\n{steps}"
        return steps

    def start(self, address: str, scenario: str, *args: str) -> "RunningScenario":
        return RunningScenario(self.command(address, scenario, *args))

    def state(self, address: str) -> Dict[str, Any]:
        """The server's calls in flight and locations (names, ids), read through grpc-go."""
        return self.run(address, "state")["state"]

    def eventually(self, address: str, condition: Callable[[Dict[str, Any]], bool]) -> Dict[str, Any]:
        """The server's state once condition holds; polled at most 600 times (~60 s or more)."""
        state: Dict[str, Any] = {}
        for _ in range(600):
            state = self.state(address)
            if condition(state):
                return state
            time.sleep(0.1)
        pytest.fail(f"the server's state never met the condition; last: {state}")


def same_as_lean(step: Dict[str, Any], address: str, token: Optional[str] = None) -> None:
    """step's status (code and message, as grpc-go reported them) is what the lean protocol
    answers for the bytes grpc-go sent."""
    payload = bytes.fromhex(step["request_hex"])
    assert (step["code"], step["message"]) == lean_call(address, step["method"], payload, token), step


# ---------------------------------------------------------------------------------------------
# What proto/ declares, as protoc parses it


@pytest.fixture(scope="session")
def proto_services(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, List[Tuple[str, str, str, bool, bool]]]:
    """Every service of proto/: its methods as (name, input, output, client streaming, server streaming)."""
    out = tmp_path_factory.mktemp("descriptors") / "proto.binpb"
    sources = sorted(str(p.relative_to(PROTO_DIR)) for p in PROTO_DIR.rglob("*.proto"))
    result = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={PROTO_DIR}",
                             f"--descriptor_set_out={out}", *sources], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    services: Dict[str, List[Tuple[str, str, str, bool, bool]]] = {}
    for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        for service in file.service:
            services[f"{file.package}.{service.name}"] = [
                (m.name, m.input_type.lstrip("."), m.output_type.lstrip("."), m.client_streaming, m.server_streaming)
                for m in service.method]
    return services


# ---------------------------------------------------------------------------------------------
# Every unary method, values read back


def test_every_location_method(go_client: GoClient, shared_server: RunningServer) -> None:
    name = unique("Pantry")
    chosen = str(uuid.uuid4()).upper()
    steps = go_client.run(shared_server.address, "locations", name, chosen)
    created = steps.ok("create")
    assert (created["name"], created["color_hex"]) == (name, "#AABBCC"), steps  # sent "#aabbcc"
    assert UUID_V4.fullmatch(created["id"]) and created["create_time"] and created["update_time"] == created["create_time"]
    assert steps.ok("get") == created and steps["get_equals_create"]["equal"] is True
    assert created in steps.ok("list")["locations"]
    renamed = steps.ok("update_name")  # mask ["name"]: the color sent is ignored
    assert (renamed["id"], renamed["name"], renamed["color_hex"]) == (created["id"], name + " 2", "#AABBCC")
    assert renamed["create_time"] == created["create_time"]
    replaced = steps.ok("update_all")  # no mask: every mutable field
    assert (replaced["name"], replaced["color_hex"]) == (name + " 3", "#123ABC")
    assert steps.ok("get_updated") == replaced and steps["get_equals_update"]["equal"] is True
    assert steps.ok("delete") == {}
    for gone in ("get_deleted", "delete_again"):
        assert created["id"] in steps.failed(gone, grpc.StatusCode.NOT_FOUND)
        same_as_lean(steps[gone], shared_server.address)
    kept = steps.ok("create_chosen_id")
    assert kept["id"] == chosen.lower() and kept["name"] == name + " chosen" and kept["color_hex"] == "#ABCDEF"
    assert steps.ok("delete_chosen_id") == {}
    assert steps["connections"]["count"] == 1


def test_every_category_group_and_item_category_method(go_client: GoClient, shared_server: RunningServer) -> None:
    prefix = unique("Kitchen")
    steps = go_client.run(shared_server.address, "groups", prefix)
    g1, g2 = steps.ok("create_group"), steps.ok("create_group2")
    assert (g1["name"], g1["color_hex"], g1["item_categories"]) == (prefix + " Baking", "#112233", [])
    flour, anise = steps.ok("create_item"), steps.ok("create_item2")
    assert (flour["name"], flour["icon_name"], flour["category_group_id"]) == (prefix + " Flour", "bag.fill", g1["id"])
    assert (anise["name"], anise["icon_name"], anise["category_group_id"]) == (prefix + " Anise", "leaf", g1["id"])
    assert steps.ok("get_item") == flour
    assert steps.ok("list_items_group")["item_categories"] == [anise, flour]  # sorted by name
    everything = steps.ok("list_items_all")["item_categories"]
    assert anise in everything and flour in everything
    assert steps.ok("get_group_with_items") == {**g1, "item_categories": [anise, flour]}
    assert steps.ok("get_group") == g1  # without include_item_categories
    listed = steps.ok("list_groups")["category_groups"]
    assert g1 in listed and g2 in listed
    iconed = steps.ok("update_item_icon")
    assert (iconed["name"], iconed["icon_name"], iconed["category_group_id"]) == (flour["name"], "jar", g1["id"])
    moved = steps.ok("update_item_move")
    assert (moved["name"], moved["icon_name"], moved["category_group_id"]) == (flour["name"], "jar", g2["id"])
    replaced = steps.ok("update_item_all")
    assert (replaced["name"], replaced["icon_name"], replaced["category_group_id"]) == \
        (prefix + " Star anise", "star.fill", g1["id"])
    assert steps.ok("list_items_group2")["item_categories"] == [moved]
    recoloured = steps.ok("update_group_color")
    assert (recoloured["name"], recoloured["color_hex"]) == (g1["name"], "#ABCDEF")
    renamed = steps.ok("update_group_all")
    assert (renamed["name"], renamed["color_hex"]) == (prefix + " Baking 2", "#010203")
    message = steps.failed("delete_group_without_cascade", grpc.StatusCode.FAILED_PRECONDITION)
    assert g1["id"] in message
    assert steps.ok("delete_group_cascade") == {}
    steps.failed("get_item_after_cascade", grpc.StatusCode.NOT_FOUND)  # cascade took it
    steps.failed("get_group_deleted", grpc.StatusCode.NOT_FOUND)
    assert steps.ok("delete_item") == {}
    steps.failed("get_item_deleted", grpc.StatusCode.NOT_FOUND)
    assert steps.ok("delete_group2") == {}


def _nanos(rfc3339: str) -> int:
    """An RFC 3339 UTC timestamp (as proto3 JSON writes them) in nanoseconds since the epoch."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", rfc3339)
    assert match, rfc3339
    seconds = int(datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp())
    return seconds * 1_000_000_000 + int((match.group(2) or "0").ljust(9, "0"))


def expected_summary(meals: Sequence[Dict[str, Any]], zone: tzinfo) -> Dict[str, Any]:
    """SummarizeMealRecordsResponse (proto3 JSON) for meals, days in zone, from the meals' values."""
    order = ["MEAL_CATEGORY_BREAKFAST", "MEAL_CATEGORY_LUNCH", "MEAL_CATEGORY_DINNER", "MEAL_CATEGORY_SNACK"]
    by_day: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for meal in meals:
        when = datetime.fromtimestamp(_nanos(meal["eaten_at"]) // 1_000_000_000, tz=timezone.utc).astimezone(zone)
        by_day[when.strftime("%Y-%m-%d")].append(meal)

    def totals(group: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return [{"category": c, "total_calories": str(sum(m["calories"] for m in group if m["category"] == c)),
                 "meal_count": sum(1 for m in group if m["category"] == c)}
                for c in order if any(m["category"] == c for m in group)]

    days = [{"date": day, "total_calories": str(sum(m["calories"] for m in by_day[day])), "meal_count": len(by_day[day]),
             "categories": totals(by_day[day])} for day in sorted(by_day)]
    return {"days": days, "total_calories": str(sum(m["calories"] for m in meals)), "meal_count": len(meals),
            "categories": totals(meals)}


def test_every_meal_record_method(go_client: GoClient, start_server: Callable[..., RunningServer]) -> None:
    server = start_server()  # its own database: the summaries count every meal in it
    steps = go_client.run(server.address, "meals")
    made = [steps.ok(f"create_{i}") for i in range(3)]
    for i, meal in enumerate(made):
        sent = steps[f"create_{i}"]["request"]["meal_record"]
        assert {k: meal[k] for k in ("name", "calories", "category", "eaten_at")} == \
            {k: sent[k] for k in ("name", "calories", "category", "eaten_at")}, steps
        assert UUID_V4.fullmatch(meal["id"])
    assert made[0]["eaten_at"] == "2026-01-01T08:00:00.123456789Z"  # to the nanosecond
    assert steps.ok("get") == made[1]
    first = steps.ok("list_page_1")
    assert [m["id"] for m in first["meal_records"]] == [made[2]["id"], made[1]["id"]] and first["next_page_token"]
    rest = steps.ok("list_page_2")
    assert [m["id"] for m in rest["meal_records"]] == [made[0]["id"]] and rest["next_page_token"] == ""
    assert steps.ok("list_lunch")["meal_records"] == [made[1]]
    # start_time is inclusive and end_time exclusive, to the nanosecond: made[0] in, made[2] out.
    assert [m["id"] for m in steps.ok("list_range")["meal_records"]] == [made[1]["id"], made[0]["id"]]
    recounted = steps.ok("update_calories")
    assert {**recounted, "update_time": None} == {**made[0], "calories": 450, "update_time": None}
    steps.failed("update_all_without_eaten_at", grpc.StatusCode.INVALID_ARGUMENT)
    same_as_lean(steps["update_all_without_eaten_at"], server.address)
    replaced = steps.ok("update_all")
    assert (replaced["name"], replaced["calories"], replaced["category"], replaced["eaten_at"]) == \
        ("Stew", 333, "MEAL_CATEGORY_SNACK", "2026-01-01T20:00:00.500Z")
    assert steps.ok("get_updated") == replaced
    meals = [recounted, made[1], replaced]
    assert steps.ok("summarize_utc") == expected_summary(meals, timezone.utc)
    # 20:00Z is 04:00 the next day in Taipei (UTC+8): two days there.
    taipei = steps.ok("summarize_taipei")
    assert taipei == expected_summary(meals, ZoneInfo("Asia/Taipei")) and len(taipei["days"]) == 2
    assert steps.ok("summarize_offset_480") == expected_summary(meals, timezone(timedelta(minutes=480)))
    assert steps.ok("delete") == {}
    steps.failed("get_deleted", grpc.StatusCode.NOT_FOUND)
    now = steps.ok("create_now")
    assert now["eaten_at"], "eaten_at unset on create: the server's now"
    listed = steps.ok("list_after")["meal_records"]
    assert {m["id"] for m in listed} == {made[1]["id"], replaced["id"], now["id"]}
    assert [_nanos(m["eaten_at"]) for m in listed] == sorted((_nanos(m["eaten_at"]) for m in listed), reverse=True)
    assert steps.ok("delete_now") == {}


def test_admin_and_larder_reflection(go_client: GoClient, shared_server: RunningServer,
                                     proto_services: Dict[str, List[Tuple[str, str, str, bool, bool]]]) -> None:
    steps = go_client.run(shared_server.address, "admin")
    info = steps.ok("server_info")
    assert info["version"] and info["protocol_version"] == "larder.rpc.v1" and info["start_time"]
    metrics = steps.ok("metrics")
    assert int(metrics["connections_open"]) >= 1 and int(metrics["calls_in_flight"]) >= 1 and metrics["methods"]
    listed = steps.ok("list_services")["services"]
    assert [s["name"] for s in listed] == sorted(proto_services)
    for service in listed:
        assert [(m["name"], m["full_name"], m["input_type"], m["output_type"]) for m in service["methods"]] == \
            [(name, f"/{service['name']}/{name}", i, o) for name, i, o, _, _ in proto_services[service["name"]]]
    # DescribeType against the descriptors compiled into the Go program from proto/.
    for name in ("larder.v1.Location", "larder.v1.MealRecord"):
        step = steps[f"describe {name}"]
        described = steps.ok(f"describe {name}")["message_type"]
        generated = step["generated"]
        assert described["name"] == generated["message"] == name
        assert [(f["name"], f["json_name"], f["number"], f["type"], f["label"], f["type_name"]) for f in described["fields"]] == \
            [(f["name"], f["json_name"], f["number"], "TYPE_" + f["kind"].upper(),
              "LABEL_REPEATED" if f["repeated"] else "LABEL_SINGULAR", f["type_name"]) for f in generated["fields"]]
    enum = steps.ok("describe larder.v1.MealCategory")["enum_type"]
    assert enum["values"] == steps["describe larder.v1.MealCategory"]["generated"]["values"]
    assert "no.such.Type" in steps.failed("describe no.such.Type", grpc.StatusCode.NOT_FOUND)


# ---------------------------------------------------------------------------------------------
# Errors

EXPECTED_ERRORS = {
    "create_location_blank_name": grpc.StatusCode.INVALID_ARGUMENT,
    "create_location_bad_color": grpc.StatusCode.INVALID_ARGUMENT,
    "create_location_taken": grpc.StatusCode.ALREADY_EXISTS,
    "create_location_taken_unicode": grpc.StatusCode.ALREADY_EXISTS,
    "create_location_taken_percent": grpc.StatusCode.ALREADY_EXISTS,
    "create_location_bad_id": grpc.StatusCode.INVALID_ARGUMENT,
    "get_location_missing": grpc.StatusCode.NOT_FOUND,
    "get_location_not_uuid": grpc.StatusCode.INVALID_ARGUMENT,
    "update_location_missing": grpc.StatusCode.NOT_FOUND,
    "delete_location_missing": grpc.StatusCode.NOT_FOUND,
    "create_group_taken": grpc.StatusCode.ALREADY_EXISTS,
    "update_group_bad_mask": grpc.StatusCode.INVALID_ARGUMENT,
    "delete_group_with_items": grpc.StatusCode.FAILED_PRECONDITION,
    "create_item_taken": grpc.StatusCode.ALREADY_EXISTS,
    "create_item_missing_group": grpc.StatusCode.FAILED_PRECONDITION,
    "create_item_bad_icon": grpc.StatusCode.INVALID_ARGUMENT,
    "create_meal_negative_calories": grpc.StatusCode.INVALID_ARGUMENT,
    "create_meal_unspecified_category": grpc.StatusCode.INVALID_ARGUMENT,
    "create_meal_too_many_calories": grpc.StatusCode.INVALID_ARGUMENT,
    "list_meals_bad_token": grpc.StatusCode.INVALID_ARGUMENT,
    "list_meals_negative_page_size": grpc.StatusCode.INVALID_ARGUMENT,
    "summarize_end_before_start": grpc.StatusCode.INVALID_ARGUMENT,
    "summarize_unknown_time_zone": grpc.StatusCode.INVALID_ARGUMENT,
    "summarize_missing_range": grpc.StatusCode.INVALID_ARGUMENT,
    "get_meal_missing": grpc.StatusCode.NOT_FOUND,
    "unknown_method": grpc.StatusCode.UNIMPLEMENTED,
    "unknown_service": grpc.StatusCode.UNIMPLEMENTED,
    "undecodable_request": grpc.StatusCode.INVALID_ARGUMENT,
}


def test_error_statuses_and_messages_are_the_lean_protocols(go_client: GoClient, shared_server: RunningServer) -> None:
    taken, missing = unique("Taken"), str(uuid.uuid4())
    steps = go_client.run(shared_server.address, "errors", taken, missing)
    setups = {"setup_location", "setup_group", "setup_item", "setup_location_percent"}
    for setup in setups:
        steps.ok(setup)
    assert {s["step"] for s in steps.lines} - setups == set(EXPECTED_ERRORS)
    for name, expected in EXPECTED_ERRORS.items():
        assert steps.failed(name, expected), f"{name}: {expected} came without a message"
    # The same bytes over the lean protocol: the same code and message.
    names = list(EXPECTED_ERRORS)
    lean = lean_calls(shared_server.address, [(steps[n]["method"], bytes.fromhex(steps[n]["request_hex"])) for n in names])
    for name, answer in zip(names, lean):
        assert (steps[name]["code"], steps[name]["message"]) == answer, name
    assert missing in steps.failed("get_location_missing", grpc.StatusCode.NOT_FOUND)
    assert taken in steps.failed("create_location_taken", grpc.StatusCode.ALREADY_EXISTS)
    assert steps["unknown_method"]["method"] == "/larder.v1.LocationService/NoSuchMethod"
    # grpc-message is percent-encoded text: non-ASCII and "%" come through as they were.
    assert steps.failed("create_location_taken_unicode", grpc.StatusCode.ALREADY_EXISTS) == \
        'location name "\u5ba2\u5ef3" already exists'  # a seeded location
    assert f'"{taken} 100% \u00e9"' in steps.failed("create_location_taken_percent", grpc.StatusCode.ALREADY_EXISTS)


# ---------------------------------------------------------------------------------------------
# Deadlines and cancellation


def test_deadlines_in_every_unit_and_a_watch_ended_by_its_deadline(go_client: GoClient,
                                                                   shared_server: RunningServer) -> None:
    # grpc-go sends a context's time left as grpc-timeout in the smallest unit that keeps it to 8
    # digits: 30 s as u, 2000 s as m, 2e5 s as S, 1e9 s as M, 9e9 s (285 years) as H. Each is far
    # longer than the call: none is a timing margin.
    steps = go_client.run(shared_server.address, "deadlines")
    for seconds in (30, 2000, 200000, 1000000000, 9000000000):
        assert steps.ok(f"list_within_{seconds}s")["locations"]
        assert steps.ok(f"health_within_{seconds}s") == {"status": "SERVING"}
    # A deadline already past: grpc-go fails the call itself, without sending it.
    assert steps.failed("list_deadline_already_past", grpc.StatusCode.DEADLINE_EXCEEDED)
    # Health Watch stays open: its 3 s deadline ends it, DEADLINE_EXCEEDED whichever side sees it
    # first (grpc-go's timer or the server's 250 ms check). Its first message, SERVING, is
    # asserted where no deadline races it (test_health_check_and_watch...).
    watch = steps["watch_until_deadline"]
    assert watch["code"] == grpc.StatusCode.DEADLINE_EXCEEDED.value[0], steps
    assert set(watch["statuses"] or []) <= {"SERVING"}, steps
    assert steps.ok("list_after")["locations"]
    assert steps["connections"]["count"] == 1


@contextmanager
def write_lock(database: Path) -> Iterator[None]:
    """The SQLite database's write lock, held by another process's connection (BEGIN
    IMMEDIATE) until the block ends: the server's writes wait for it (its --busy-timeout),
    its reads go on (WAL)."""
    connection = sqlite3.connect(str(database), isolation_level=None, timeout=TIMEOUT)
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield
    finally:
        connection.close()  # ends the transaction: the lock is released


def test_a_write_still_waiting_at_its_deadline_is_deadline_exceeded_and_never_executed(
        go_client: GoClient, start_server: Callable[..., RunningServer]) -> None:
    server = start_server("--busy-timeout", "300")  # the write waits for the lock until we release it
    name = unique("Too late")
    with write_lock(server.db):
        steps = go_client.run(server.address, "deadline-locked", name)
        assert steps.ok("read_while_locked")["locations"]
        # The 2 s deadline passes while the write waits for the lock. The status is
        # DEADLINE_EXCEEDED whoever notices first: grpc-go's own timer ("context deadline
        # exceeded") or the server's check (its message).
        message = steps.failed("create_past_deadline", grpc.StatusCode.DEADLINE_EXCEEDED)
        assert message in {"context deadline exceeded", "deadline of /larder.v1.LocationService/CreateLocation exceeded"}
        assert steps.ok("read_after")["locations"]  # the same connection, the lock still held
        assert steps["connections"]["count"] == 1
    # Once the lock is gone the writer reaches the write and skips it (its deadline passed):
    # nothing in flight but the metrics call itself, and no such location.
    state = go_client.eventually(server.address, lambda s: int(s["calls_in_flight"]) == 1)
    assert name not in state["location_names"]
    assert go_client.run(server.address, "locations", unique("In time"), str(uuid.uuid4())).ok("create")


def test_a_started_call_cancelled_by_its_context_still_commits_and_the_connection_serves_on(
        go_client: GoClient, start_server: Callable[..., RunningServer]) -> None:
    server = start_server("--busy-timeout", "300")
    name = unique("Cancelled")
    with write_lock(server.db):
        steps = go_client.run(server.address, "cancel-locked", name)
        # The server had started the call (its metrics counted it) when the context was cancelled.
        assert steps["server_started_the_call"]["started"] is True, steps
        assert steps.failed("create_cancelled", grpc.StatusCode.CANCELLED) == "context canceled"
        assert steps.ok("read_after")["locations"]
        assert steps["connections"]["count"] == 1
        assert name not in go_client.state(server.address)["location_names"]  # still waiting for the lock
    # PROTOCOL.md §10: a unary call the server has started runs to its end as if the client had
    # waited; a write among them is committed, only its reply is dropped.
    go_client.eventually(server.address, lambda s: name in s["location_names"] and int(s["calls_in_flight"]) == 1)


def test_cancelled_calls_and_a_cancelled_watch_leave_the_connection_serving(go_client: GoClient,
                                                                           shared_server: RunningServer) -> None:
    steps = go_client.run(shared_server.address, "cancel")
    cancelled = steps["cancelled_at_once"]["codes"]
    # Each cancelled as soon as it started: CANCELLED, or OK when the reply won the race.
    assert set(cancelled) <= {"Canceled", "OK"} and sum(cancelled.values()) == 50, steps
    watch = steps["watch_cancelled"]
    assert watch["first"] == "SERVING" and watch["code"] == grpc.StatusCode.CANCELLED.value[0], steps
    assert steps["after"]["codes"] == {"OK": 100}, steps
    assert steps["connections"]["count"] == 1
    assert shared_server.process.poll() is None


# ---------------------------------------------------------------------------------------------
# Metadata and auth


def test_custom_and_binary_metadata_and_the_header_list_limit(go_client: GoClient, shared_server: RunningServer) -> None:
    steps = go_client.run(shared_server.address, "metadata")
    plain = steps.ok("plain")
    # ASCII, -bin (grpc-go sends it as unpadded base64), a key twice, a value with spaces
    # around it: served like the call without them; the server sends no metadata back.
    assert steps.ok("custom") == plain
    for name in ("plain", "custom"):
        assert steps[f"{name} metadata"]["header"] == {"content-type": ["application/grpc"]}, steps
        assert steps[f"{name} metadata"]["trailer"] == {}, steps
    # The server's SETTINGS_MAX_HEADER_LIST_SIZE is 8192 (LIMITS.md): a 7,000-byte value goes,
    # a 9,000-byte one grpc-go itself refuses to send, naming the server's limit.
    assert steps.ok("near_header_limit") == plain
    message = steps.failed("over_header_limit", grpc.StatusCode.INTERNAL)
    assert message == "header list size to send violates the maximum size (8192 bytes) set by server"
    assert steps.ok("content_subtype_proto") == plain  # content-type application/grpc+proto
    assert steps.ok("after") == plain
    assert steps["connections"]["count"] == 1


def test_bearer_token(go_client: GoClient, start_server: Callable[..., RunningServer], tmp_path: Path,
                      proto_services: Dict[str, List[Tuple[str, str, str, bool, bool]]]) -> None:
    token = "s3cret-token"
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    server = start_server("--auth-token-file", str(token_file))
    steps = go_client.run(server.address, "auth", token=token)
    no_token = steps.failed("no_token", grpc.StatusCode.UNAUTHENTICATED)
    same_as_lean(steps["no_token"], server.address)
    steps.failed("wrong_token", grpc.StatusCode.UNAUTHENTICATED)
    same_as_lean(steps["wrong_token"], server.address, token="wrong")
    steps.failed("basic_scheme", grpc.StatusCode.UNAUTHENTICATED)
    assert steps.ok("right_token")["locations"]
    assert steps.ok("lower_case_scheme") == steps.ok("right_token")  # "bearer": the scheme in any case
    assert steps.ok("per_rpc_credentials") == steps.ok("right_token")  # credentials.PerRPCCredentials
    assert steps.ok("health_without_token") == {"status": "SERVING"}  # health needs none
    # Reflection needs the token too; refused at its headers, with the same message.
    assert steps.failed("reflection_without_token", grpc.StatusCode.UNAUTHENTICATED) == no_token
    assert steps["reflection_with_token"]["code"] == 0 and \
        steps["reflection_with_token"]["services"] == sorted(proto_services), steps


# ---------------------------------------------------------------------------------------------
# Health and reflection


def test_health_check_and_watch_and_reflection_with_grpc_gos_own_packages(
        go_client: GoClient, shared_server: RunningServer,
        proto_services: Dict[str, List[Tuple[str, str, str, bool, bool]]]) -> None:
    steps = go_client.run(shared_server.address, "health-reflection")
    assert steps.ok("check_server") == {"status": "SERVING"}
    # grpc-go's v1alpha reflection client and the v1 stubs generated from proto/: exactly the
    # services proto/ declares.
    assert steps["list_services_v1alpha"]["code"] == 0, steps
    assert steps["list_services_v1alpha"]["services"] == sorted(proto_services)
    assert steps["list_services_v1"]["code"] == 0 and steps["list_services_v1"]["services"] == sorted(proto_services)
    for service in proto_services:
        assert steps.ok(f"check {service}") == {"status": "SERVING"}
    assert "no.such.Service" in steps.failed("check_unknown", grpc.StatusCode.NOT_FOUND)
    assert steps["watch_first"]["code"] == 0 and steps["watch_first"]["first"] == "SERVING", steps
    # Each service's file through FileContainingSymbol, built with protodesc (every import
    # came along), describes what the Go code generated from proto/ describes.
    assert steps["descriptors_build"]["code"] == 0, steps
    compared = steps.named("service ")
    assert {s["step"].removeprefix("service ") for s in compared} == \
        {s for s in proto_services if s.startswith("larder.") or s.startswith("grpc.health.")}
    for entry in compared:
        assert entry["reflected"] and entry["reflected"] == entry["generated"], entry
    for message in steps.named("message "):
        assert message["reflected"] and message["reflected"] == message["generated"], message


# ---------------------------------------------------------------------------------------------
# Load, limits, compression


@pytest.mark.parametrize("max_calls", [None, "8", "1"], ids=["default", "max-calls-8", "max-calls-1"])
def test_a_thousand_concurrent_calls_on_one_client_conn(go_client: GoClient, shared_server: RunningServer,
                                                        start_server: Callable[..., RunningServer],
                                                        max_calls: Optional[str]) -> None:
    # The server advertises --max-calls-per-connection as SETTINGS_MAX_CONCURRENT_STREAMS;
    # grpc-go queues its streams beyond it, so none is refused, whatever the limit.
    # (Writes are synced at checkpoints only on the servers of their own: with one call at a
    # time, 3,000 calls would otherwise wait for 2,000 fsyncs in turn.)
    server = shared_server if max_calls is None else \
        start_server("--max-calls-per-connection", max_calls, "--durability", "normal")
    summary = go_client.run(server.address, "concurrent", unique("Shelf"), "1000", timeout=LONG_TIMEOUT)["summary"]
    assert summary["creates"] == {"OK": 1000} and summary["gets"] == {"OK": 1000}, summary
    assert summary["deletes"] == {"OK": 1000}, summary
    assert summary["distinct_ids"] == 1000 and summary["read_back_equal"] == 1000, summary
    assert summary["connections"] == 1, summary


@pytest.mark.parametrize("limit", [DEFAULT_MAX_FRAME_BYTES, 65536], ids=["default", "max-frame-bytes-65536"])
def test_a_message_near_the_size_limit_is_served_and_one_over_it_refused(
        go_client: GoClient, shared_server: RunningServer, start_server: Callable[..., RunningServer], limit: int) -> None:
    server = shared_server if limit == DEFAULT_MAX_FRAME_BYTES else start_server("--max-frame-bytes", str(limit))
    steps = go_client.run(server.address, "size", str(limit))
    # GetLocation requests padded with an unknown field (which the server skips): decoded and
    # looked up (NOT_FOUND), up to the limit itself.
    for name in ("near_limit", "at_limit"):
        assert steps[name]["request_length"] <= limit
        steps.failed(name, grpc.StatusCode.NOT_FOUND)
    assert steps["at_limit"]["request_length"] == limit
    over = steps["over_limit"]["request_length"]
    assert over > limit
    assert steps.failed("over_limit", grpc.StatusCode.RESOURCE_EXHAUSTED) == \
        f"request message of {over} bytes exceeds the limit of {limit} bytes"
    steps.failed("after", grpc.StatusCode.NOT_FOUND)  # the same connection serves on
    assert steps["connections"]["count"] == 1


def test_gzip_compressed_calls_are_served_and_replies_read(go_client: GoClient, shared_server: RunningServer) -> None:
    name = unique("Cellar")
    steps = go_client.run(shared_server.address, "gzip", name, str(DEFAULT_MAX_FRAME_BYTES))
    created = steps.ok("create")
    assert (created["name"], created["color_hex"]) == (name, "#AABBCC")
    assert steps.ok("get") == created and steps["get_equals_create"]["equal"] is True
    for i in range(12):
        steps.ok(f"create_shelf_{i}")
    # Replies follow the request's grpc-encoding: gzip. Those of 1 KiB or more come compressed
    # (grpc-go inflates them); smaller ones go with the flag 0 (5 bytes of prefix, no more).
    listed = steps["list"]
    assert listed["code"] == 0 and listed["reply_compression"] == "gzip", steps
    assert listed["reply_length"] > 1024 and listed["reply_wire_length"] < listed["reply_length"], listed
    plain = steps["list_uncompressed"]
    assert plain["reply_compression"] == "" and plain["reply_wire_length"] == plain["reply_length"] + 5
    assert steps.ok("list") == steps.ok("list_uncompressed")
    small = steps["get"]
    assert small["reply_compression"] == "gzip" and small["reply_wire_length"] == small["reply_length"] + 5
    assert steps.ok("get_per_call_gzip") == created and steps["get_per_call_gzip"]["reply_compression"] == "gzip"
    # Decoded after inflating, checked as ever; the lean protocol says the same of the bytes.
    steps.failed("create_blank_name", grpc.StatusCode.INVALID_ARGUMENT)
    same_as_lean(steps["create_blank_name"], shared_server.address)
    # The size limit applies to the inflated message (random hex compresses about 2:1).
    near = steps["get_near_limit_inflated"]
    assert near["request_wire_length"] < near["request_length"] < DEFAULT_MAX_FRAME_BYTES
    assert steps.ok("get_near_limit_inflated") == created
    over = steps["get_over_limit_inflated"]
    assert over["request_length"] > DEFAULT_MAX_FRAME_BYTES > over["request_wire_length"]
    assert steps.failed("get_over_limit_inflated", grpc.StatusCode.RESOURCE_EXHAUSTED) == \
        f"request message of {over['request_wire_length'] - 5} bytes (gzip) inflates to more than the limit " \
        f"of {DEFAULT_MAX_FRAME_BYTES} bytes"
    assert steps.ok("get_after") == created
    # 4 MiB of zeros gzip to 4 KiB, a bomb's ratio: a fresh connection may not inflate that much
    # (32 times what it sent, plus 256 KiB; LIMITS.md). The refusal uses up the connection's share
    # without overdrawing it, so its next compressed call (grpc-go compresses even the smallest
    # message) is served at once, as are uncompressed ones: byte counts, not time.
    assert steps.failed("fresh_get_zeros", grpc.StatusCode.RESOURCE_EXHAUSTED) == \
        "the compressed requests of this connection inflate to more than 32 times the bytes it sent " \
        f"(and 262144 bytes more): this one was refused; send it uncompressed (at most {DEFAULT_MAX_FRAME_BYTES} bytes)"
    recovery = steps["fresh_recovery"]
    assert (recovery["refusals"], recovery["first_ok"]) == (0, 0), recovery
    assert steps.ok("fresh_get_identity") == created
    for cleanup in steps.named("cleanup"):
        assert cleanup["code"] == 0, cleanup
    assert steps["connections"] == {"step": "connections", "count": 1, "fresh": 1, "plain": 1}


def test_watch_streams_hold_their_slots_and_cancelling_them_frees_them(
        go_client: GoClient, start_server: Callable[..., RunningServer]) -> None:
    # Four Watch streams fill SETTINGS_MAX_CONCURRENT_STREAMS 4: a fifth call waits in grpc-go
    # (it is not served while they are open) and is served once they are cancelled (RST_STREAM
    # frees a stream's slot at once, PROTOCOL.md §10).
    server = start_server("--max-calls-per-connection", "4")
    steps = go_client.run(server.address, "watchers")
    assert steps["watches_open"]["first"] == ["SERVING"] * 4, steps
    assert steps["served_before_cancel"]["served"] is False, steps
    assert steps["watches_cancelled"]["codes"] == ["Canceled"] * 4, steps
    assert steps.ok("queued_call")["locations"]
    assert steps["after"]["codes"] == {"OK": 100}, steps
    assert steps["connections"]["count"] == 1


def test_replies_larger_than_grpc_gos_stream_window(go_client: GoClient,
                                                    start_server: Callable[..., RunningServer]) -> None:
    # Pages of 1,000 meals with 100-character names: ~180 KB replies, past grpc-go's initial
    # 64 KiB stream window, so the server sends as grpc-go's WINDOW_UPDATEs come; and the same
    # pages gzip-compressed.
    server = start_server()  # its own meals
    steps = go_client.run(server.address, "large-replies", "2500", timeout=LONG_TIMEOUT)
    assert steps["created"] == {"step": "created", "codes": {"OK": 2500}, "distinct_ids": 2500}, steps
    for name in ("plain", "gzip"):
        listing = steps[name]
        assert listing["code"] == 0, steps
        assert (listing["listed"], listing["distinct"], listing["missing"]) == (2500, 2500, 0), listing
        assert listing["page_sizes"] == [1000, 1000, 500], listing
    for page in steps.named("plain_page"):
        assert page["reply_wire_length"] == page["reply_length"] + 5 and page["reply_length"] > 65535, page
    for page in steps.named("gzip_page"):
        assert page["reply_compression"] == "gzip" and page["reply_wire_length"] < page["reply_length"], page


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tls_certificates.Certificates:
    return tls_certificates.make(tmp_path_factory.mktemp("tls"))


def test_grpc_go_over_tls_beside_h2c(go_client: GoClient, start_server: Callable[..., RunningServer],
                                     certs: tls_certificates.Certificates, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("tls-token\n")
    server = start_server(*certs.server_flags(), "--auth-token-file", str(token_file), "--log-level", "debug")
    # credentials.NewTLS trusting the test CA; the token as oauth.NewOauthAccess per-RPC
    # credentials, which grpc-go sends over TLS only.
    steps = go_client.run(server.address, "tls", certs.ca, certs.other_ca, certs.client_cert, certs.client_key,
                          token="tls-token")
    for name in ("secure", "mutual"):  # a client certificate the server did not ask for changes nothing
        assert steps.ok(f"{name} health") == {"status": "SERVING"}
        assert steps.ok(f"{name} list")["locations"]
        peer = steps[f"{name} peer"]
        assert (peer["auth_type"], peer["alpn"]) == ("tls", "h2"), peer
    assert any("alpn=h2" in line for line in server.log), server.log
    for call in ("untrusted health", "untrusted list"):
        assert "certificate signed by unknown authority" in steps.failed(call, grpc.StatusCode.UNAVAILABLE)
    # h2c on the same port: served, but without the token (the per-RPC credentials need TLS).
    assert steps.ok("plaintext health") == {"status": "SERVING"}
    steps.failed("plaintext list", grpc.StatusCode.UNAUTHENTICATED)


def test_grpc_go_with_a_client_certificate_on_a_tls_only_server(
        go_client: GoClient, start_server: Callable[..., RunningServer], certs: tls_certificates.Certificates) -> None:
    server = start_server(*certs.server_flags(), "--tls-only", "--tls-client-ca", certs.ca,
                          "--tls-client-auth", "require", "--access-log")
    steps = go_client.run(server.address, "tls", certs.ca, certs.other_ca, certs.client_cert, certs.client_key)
    assert steps.ok("mutual health") == {"status": "SERVING"} and steps.ok("mutual list")["locations"]
    assert any("client_cert=" in line and "ListLocations" in line for line in server.log), server.log
    # Without a client certificate, trusting another CA, or in cleartext: no connection.
    for name in ("secure", "untrusted"):
        steps.failed(f"{name} health", grpc.StatusCode.UNAVAILABLE)
    assert steps.failed("plaintext health", grpc.StatusCode.UNAVAILABLE).startswith(
        "this server accepts TLS connections only (--tls-only)")


# ---------------------------------------------------------------------------------------------
# Keepalive


def test_keepalive_pings_meet_the_servers_ping_policy(go_client: GoClient,
                                                      start_server: Callable[..., RunningServer]) -> None:
    """LIMITS.md: a PING less than 5 minutes after the previous one, with no HEADERS or DATA
    sent in between, is a strike; past 2 strikes, GOAWAY ENHANCE_YOUR_CALM "too_many_pings",
    as gRPC's own servers do (grpc-go's default EnforcementPolicy: MinTime 5 min). So a grpc-go
    client with keepalive Time 10 s (its minimum) that pings while idle (PermitWithoutStream),
    or while a Watch stream sends nothing, has its connection ended after its third ping without
    data (the first counts no strike); grpc-go then reconnects (doubling its keepalive time) and
    its calls are served. Clients with grpc-go's default (no keepalive) or PermitWithoutStream
    false and no call open send no pings and keep their connection. The test waits for the
    outcome (at most 150 s), not for a time."""
    server = start_server()  # its own log
    steps = go_client.run(server.address, "keepalive", "150", timeout=LONG_TIMEOUT)
    for name in ("default", "idle_pinger", "idle_quiet", "watching"):
        assert steps.ok(f"first_call {name}") == {"status": "SERVING"}
    after = steps["after_idle"]
    assert after["bound_reached"] is False, steps
    assert after["states"]["default"] == "READY" and after["states"]["idle_quiet"] == "READY", steps
    assert after["idle_pinger_left_ready"] is True, steps  # it was closed (and reconnected)
    watch = steps["watch_end"]
    assert watch["statuses"] == ["SERVING"] and watch["code"] == grpc.StatusCode.UNAVAILABLE.value[0], steps
    assert len(steps["grpc_go_log"]["enhance_your_calm"]) >= 2, steps  # grpc-go saw the GOAWAYs
    calmed = [line for line in server.log if "too_many_pings" in line]
    assert len(calmed) >= 2 and all("event=http2_connection_failed" in line for line in calmed), server.log
    for name in ("default", "idle_pinger", "idle_quiet", "watching"):
        assert steps.ok(f"call_after {name}") == {"status": "SERVING"}
    assert steps["connections"]["counts"] == {"default": 1, "idle_pinger": 2, "idle_quiet": 1, "watching": 2}, steps


def test_the_idle_timeout_closes_idle_connections_only_and_grpc_go_reconnects(
        go_client: GoClient, start_server: Callable[..., RunningServer]) -> None:
    """--idle-timeout closes a connection silent that long with no call in flight (GOAWAY
    NO_ERROR); grpc-go reconnects and its next call is served. A connection holding a Watch
    open is not idle, however long the Watch sends nothing: here for two idle timeouts of the
    server's own clock (the other connection closed twice)."""
    server = start_server("--idle-timeout", "2")
    steps = go_client.run(server.address, "idle", "120", timeout=LONG_TIMEOUT)
    assert steps.ok("first_call idle") == {"status": "SERVING"}
    after = steps["after_idle"]
    assert after["bound_reached"] is False and after["idle_closes"] == 2, steps
    assert after["watch_first"] == "SERVING" and after["watch_ended"] == "no", steps
    assert after["watching_state"] == "READY", steps
    for name in ("idle", "watching"):
        assert steps.ok(f"call_after {name}") == {"status": "SERVING"}
    assert steps["watch_cancelled"]["code"] == grpc.StatusCode.CANCELLED.value[0], steps
    connections = steps["connections"]
    assert connections["idle"] >= 3 and connections["watching"] == 1, connections


# ---------------------------------------------------------------------------------------------
# Drain and restart


class RunningScenario:
    """A scenario run that the test talks to while it runs: its stdout lines as they come (a
    thread reads them, so waiting for one is bounded), then its whole output."""

    def __init__(self, command: List[str]) -> None:
        self.command = command
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.pending: "queue.Queue[Optional[str]]" = queue.Queue()
        self.stdout: List[str] = []
        self.stderr: List[str] = []
        self.readers = [threading.Thread(target=self._read_stdout, daemon=True),
                        threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self.readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # ends at EOF, when the program exits
            self.stdout.append(line)
            self.pending.put(line)
        self.pending.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def next_step(self, name: str) -> Dict[str, Any]:
        """The next line (waiting TIMEOUT at most), which must be step name."""
        try:
            line = self.pending.get(timeout=TIMEOUT)
        except queue.Empty:
            self.stop()
            pytest.fail(f"the Go program wrote no {name!r} step within {TIMEOUT} s:\n{''.join(self.stderr)}")
        assert line is not None, f"the Go program ended before step {name!r}:\n{''.join(self.stderr)}"
        step: Dict[str, Any] = json.loads(line)
        assert step["step"] == name, step
        return step

    def finish(self, stdin: str = "") -> Steps:
        """Writes stdin and closes it, waits for the program's end (TIMEOUT at most)."""
        assert self.process.stdin is not None
        if stdin:
            self.process.stdin.write(stdin)
        self.process.stdin.close()
        try:
            self.process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f"the Go program did not finish within {TIMEOUT} s:\n{''.join(self.stderr)}")
        for reader in self.readers:
            reader.join(TIMEOUT)
        steps = Steps(self.command, "".join(self.stdout), "".join(self.stderr))
        assert self.process.returncode == 0, f"exit {self.process.returncode}\n{steps}"
        return steps

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(TIMEOUT)


def test_sigterm_drains_calls_in_flight_and_keeps_every_acknowledged_write(
        go_client: GoClient, start_server: Callable[..., RunningServer]) -> None:
    server = start_server("--drain-timeout", "60")
    writer = go_client.start(server.address, "drain", unique("Drain"))
    try:
        writer.next_step("progress")  # 50 creates acknowledged: 8 goroutines still writing
        server.signal(signal.SIGTERM)
        assert server.wait(90) == 0
        steps = writer.finish()
        summary = steps["summary"]
    finally:
        writer.stop()
    # PROTOCOL.md §10: a Watch open at the drain gets NOT_SERVING, then ends with OK, before the
    # GOAWAY.
    watch = steps["watch"]
    assert watch["statuses"] == ["SERVING", "NOT_SERVING"] and watch["code"] == 0, steps
    assert len(summary["acknowledged"]) >= 50
    # Calls after the drain began: refused UNAVAILABLE (the GOAWAY, then a connection refused).
    assert set(summary["refused"]) <= {"Unavailable"}, summary
    restarted = start_server(db=server.db)
    stored = set(go_client.state(restarted.address)["location_ids"])
    assert set(summary["acknowledged"]) <= stored, "an acknowledged create was lost"


def test_the_client_conn_reconnects_after_a_server_restart(go_client: GoClient,
                                                           start_server: Callable[..., RunningServer]) -> None:
    first = start_server()
    client = go_client.start(first.address, "reconnect", unique("Cellar"))
    try:
        created = client.next_step("create")
        assert created["code"] == 0, created
        client.next_step("waiting")
        first.signal(signal.SIGTERM)
        assert first.wait(60) == 0
        second = start_server(db=first.db, port=first.port)
        assert second.port == first.port
        steps = client.finish("restarted\n")
    finally:
        client.stop()
    assert steps.ok("get_after_restart") == created["reply"]
    assert steps["read_back_equal"]["equal"] is True
    assert steps["connections"]["count"] == 2
