"""grpcurl (fullstorydev/grpcurl v1.8.6: Go, grpc-go 1.44) against larder-server: list and
describe through server reflection with no proto files, invoke with JSON, exit codes
(64 + the gRPC status code), bearer tokens, deadlines and health.

The binary: $LARDER_GRPCURL_BIN, else `grpcurl` beside this Python (the venv's bin/, where
scripts/install-deps.sh puts the pinned one). A missing binary fails the tests, never skips them:
CI installs it. What the server should answer is read from proto/ (protoc's parse of it, through
grpcio-tools) and from the server's other protocol (interop_support.lean_call), not typed here.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import grpc
import pytest
from google.protobuf import descriptor_pb2, json_format, message_factory
from google.protobuf.descriptor_pb2 import FieldDescriptorProto

from grpc_stubs import PROTO_DIR
from interop_support import Stubs, lean_call, unique
from server_process import RunningServer

TIMEOUT = 60  # seconds: the bound on each grpcurl process, never a speed expectation
PINNED_VERSION = "v1.8.6"  # scripts/install-deps.sh; the exit codes and texts below are this version's
STATUS_EXIT_OFFSET = 64  # grpcurl exits 64 + the code when the call ends with a status other than OK
STATUS_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}
UUID_V4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
RFC3339_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


def rfc3339_instant(text: str) -> tuple[datetime, int]:
    """A protobuf JSON UTC timestamp as (second, nanoseconds), comparable as the instant it names."""
    whole, _, fraction = text.rstrip("Z").partition(".")
    return datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S"), int((fraction or "0").ljust(9, "0"))
# What grpcurl writes to stderr when the call's status is not OK (without -format-error).
ERROR_TEXT = re.compile(r"ERROR:\n  Code: (\w+)\n  Message: (.*)\n", re.S)


def go_code_name(code: grpc.StatusCode) -> str:
    """grpc-go's name of a status code (codes.Code.String()), which grpcurl prints."""
    return {"OK": "OK", "CANCELLED": "Canceled"}.get(code.name, code.name.title().replace("_", ""))


# ---------------------------------------------------------------------------------------------
# Running grpcurl


@dataclass
class Outcome:
    """One grpcurl run."""

    args: List[str]
    exit_code: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"{' '.join(self.args)}\nexit {self.exit_code}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


class Grpcurl:
    def __init__(self, path: Path) -> None:
        self.path = path

    def run(self, address: str, *command: str, flags: Sequence[str] = (), data: Any = None) -> Outcome:
        """grpcurl -plaintext FLAGS [-d JSON] ADDRESS COMMAND..., bounded by TIMEOUT."""
        args = [str(self.path), "-plaintext", *flags]
        if data is not None:
            args += ["-d", json.dumps(data)]
        args += [address, *command]
        result = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
        return Outcome(args, result.returncode, result.stdout, result.stderr)

    def ok(self, address: str, *command: str, flags: Sequence[str] = (), data: Any = None) -> str:
        """The stdout of a run that must succeed (exit 0, nothing on stderr)."""
        outcome = self.run(address, *command, flags=flags, data=data)
        assert outcome.exit_code == 0 and not outcome.stderr, outcome
        return outcome.stdout

    def invoke(self, address: str, method: str, request: Dict[str, Any], flags: Sequence[str] = ()) -> Any:
        """The JSON reply of a unary call that must succeed."""
        return json.loads(self.ok(address, method, flags=flags, data=request))

    def status(self, address: str, method: str, request: Optional[Dict[str, Any]],
               flags: Sequence[str] = ()) -> tuple[grpc.StatusCode, str]:
        """The status of a call that must fail, from grpcurl's exit code (64 + code), checked
        against the code name and message grpcurl prints."""
        outcome = self.run(address, method, flags=flags, data=request)
        assert outcome.exit_code > STATUS_EXIT_OFFSET, outcome
        code = STATUS_BY_NUMBER[outcome.exit_code - STATUS_EXIT_OFFSET]
        match = ERROR_TEXT.fullmatch(outcome.stderr)
        assert match, outcome
        assert match.group(1) == go_code_name(code), outcome
        assert outcome.stdout == "", outcome
        return code, match.group(2)


@pytest.fixture(scope="session")
def grpcurl() -> Grpcurl:
    explicit = os.environ.get("LARDER_GRPCURL_BIN")
    path = Path(explicit) if explicit else Path(sys.executable).parent / "grpcurl"
    if not (path.is_file() and os.access(path, os.X_OK)):
        where = "LARDER_GRPCURL_BIN" if explicit else f"beside {sys.executable}"
        pytest.fail(f"grpcurl is not an executable file at {path} ({where}): scripts/install-deps.sh "
                    f"installs the pinned grpcurl {PINNED_VERSION} into the venv's bin/; or set LARDER_GRPCURL_BIN")
    version = subprocess.run([str(path), "-version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=TIMEOUT)
    said = (version.stdout + version.stderr).strip()
    if version.returncode != 0 or said != f"grpcurl {PINNED_VERSION}":
        pytest.fail(f"{path} -version said {said!r} (exit {version.returncode}); these tests are written "
                    f"against grpcurl {PINNED_VERSION}, the one scripts/install-deps.sh pins")
    return Grpcurl(path)


# ---------------------------------------------------------------------------------------------
# What the server should describe: proto/ as protoc parses it


class Protos:
    """proto/'s files (and the well-known ones they import), parsed by protoc."""

    def __init__(self, files: Sequence[descriptor_pb2.FileDescriptorProto]) -> None:
        self.files = list(files)
        self.services: Dict[str, descriptor_pb2.ServiceDescriptorProto] = {}
        self.messages: Dict[str, descriptor_pb2.DescriptorProto] = {}
        self.enums: Dict[str, descriptor_pb2.EnumDescriptorProto] = {}
        for file in self.files:
            for service in file.service:
                self.services[f"{file.package}.{service.name}"] = service
            for message in file.message_type:
                self.messages[f"{file.package}.{message.name}"] = message
            for enum in file.enum_type:
                self.enums[f"{file.package}.{enum.name}"] = enum


@pytest.fixture(scope="session")
def protos(tmp_path_factory: pytest.TempPathFactory) -> Protos:
    out = tmp_path_factory.mktemp("descriptors") / "proto.binpb"
    sources = sorted(str(p.relative_to(PROTO_DIR)) for p in PROTO_DIR.rglob("*.proto"))
    result = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={PROTO_DIR}",
                             "--include_imports", f"--descriptor_set_out={out}", *sources],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return Protos(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file)


# grpcurl 1.8.6 prints descriptors with jhump/protoreflect's protoprint: elements sorted (fields by
# number, methods by name), fully qualified type names with a leading dot, no comments (the
# server's descriptors carry none). These render protoc's parse of proto/ the same way, for the
# flat messages and enums of larder/v1 and for services.

def _field_type(field: FieldDescriptorProto) -> str:
    if field.type in (FieldDescriptorProto.TYPE_MESSAGE, FieldDescriptorProto.TYPE_ENUM):
        return field.type_name
    return FieldDescriptorProto.Type.Name(field.type).removeprefix("TYPE_").lower()


def message_source(name: str, message: descriptor_pb2.DescriptorProto) -> str:
    assert not (message.nested_type or message.enum_type or message.oneof_decl), f"{name}: only flat messages"
    lines = []
    for field in sorted(message.field, key=lambda f: f.number):
        assert not field.proto3_optional, f"{name}.{field.name}: not rendered"
        repeated = "repeated " if field.label == FieldDescriptorProto.LABEL_REPEATED else ""
        lines.append(f"  {repeated}{_field_type(field)} {field.name} = {field.number};\n")
    return f"{name} is a message:\nmessage {message.name} {{\n{''.join(lines)}}}\n"


def enum_source(name: str, enum: descriptor_pb2.EnumDescriptorProto) -> str:
    lines = "".join(f"  {value.name} = {value.number};\n" for value in sorted(enum.value, key=lambda v: v.number))
    return f"{name} is an enum:\nenum {enum.name} {{\n{lines}}}\n"


def rpc_line(method: descriptor_pb2.MethodDescriptorProto) -> str:
    request = ("stream " if method.client_streaming else "") + method.input_type
    reply = ("stream " if method.server_streaming else "") + method.output_type
    return f"rpc {method.name} ( {request} ) returns ( {reply} );"


def service_source(name: str, service: descriptor_pb2.ServiceDescriptorProto) -> str:
    lines = "".join(f"  {rpc_line(m)}\n" for m in sorted(service.method, key=lambda m: m.name))
    return f"{name} is a service:\nservice {service.name} {{\n{lines}}}\n"


# ---------------------------------------------------------------------------------------------
# list and describe (reflection)


def test_list_is_every_service_of_proto_and_of_the_servers_own_reflection(
        grpcurl: Grpcurl, protos: Protos, shared_server: RunningServer) -> None:
    listed = grpcurl.ok(shared_server.address, "list").splitlines()
    assert listed == sorted(protos.services), "grpcurl list is not the services proto/ declares"
    # The server's own reflection service says the same.
    own = grpcurl.invoke(shared_server.address, "larder.reflection.v1.ServerReflection/ListServices", {})
    assert [service["name"] for service in own["services"]] == listed


def test_grpcurl_1_8_6_reflects_through_v1alpha(grpcurl: Grpcurl, start_server: Callable[..., RunningServer]) -> None:
    server = start_server()  # its own metrics
    grpcurl.ok(server.address, "list")
    # Metrics read with admin.proto from disk, so this call makes no reflection call of its own.
    metrics = grpcurl.invoke(server.address, "larder.admin.v1.Admin/GetMetrics", {},
                             flags=["-import-path", str(PROTO_DIR), "-proto", "larder/admin/v1/admin.proto"])
    started = {m["method"]: int(m.get("callsStarted", "0")) for m in metrics["methods"]}
    assert started.get("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo") == 1, started
    assert started.get("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", 0) == 0, started


def test_list_service_is_its_methods(grpcurl: Grpcurl, protos: Protos, shared_server: RunningServer) -> None:
    for name, service in protos.services.items():
        listed = grpcurl.ok(shared_server.address, "list", name).splitlines()
        assert listed == sorted(f"{name}.{method.name}" for method in service.method), name


def test_describe_every_service(grpcurl: Grpcurl, protos: Protos, shared_server: RunningServer) -> None:
    # Streaming markers included: health Watch, reflection's ServerReflectionInfo.
    for name, service in protos.services.items():
        assert grpcurl.ok(shared_server.address, "describe", name) == service_source(name, service)


def test_describe_every_larder_v1_message_and_enum(grpcurl: Grpcurl, protos: Protos,
                                                   shared_server: RunningServer) -> None:
    names = [n for n in [*protos.messages, *protos.enums] if n.startswith("larder.v1.")]
    assert "larder.v1.Location" in names and "larder.v1.MealCategory" in names
    for name in names:
        expected = message_source(name, protos.messages[name]) if name in protos.messages \
            else enum_source(name, protos.enums[name])
        assert grpcurl.ok(shared_server.address, "describe", name) == expected


def test_describe_a_method(grpcurl: Grpcurl, protos: Protos, shared_server: RunningServer) -> None:
    for service, method in [("larder.v1.LocationService", "GetLocation"), ("grpc.health.v1.Health", "Watch"),
                            ("grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo")]:
        declared = next(m for m in protos.services[service].method if m.name == method)
        assert grpcurl.ok(shared_server.address, "describe", f"{service}.{method}") == \
            f"{service}.{method} is a method:\n{rpc_line(declared)}\n"


def test_describe_a_field(grpcurl: Grpcurl, shared_server: RunningServer) -> None:
    # Reflection resolves a field's full name to its file, as grpc-go's and gRPC C++'s do.
    assert grpcurl.ok(shared_server.address, "describe", "larder.v1.Location.name") == \
        "larder.v1.Location.name is a field:\nstring name = 2;\n"
    assert grpcurl.ok(shared_server.address, "describe", "larder.v1.MealRecord.eaten_at") == \
        "larder.v1.MealRecord.eaten_at is a field:\n.google.protobuf.Timestamp eaten_at = 5;\n"


def test_describe_an_unknown_symbol_fails(grpcurl: Grpcurl, shared_server: RunningServer) -> None:
    # A reflection NOT_FOUND is grpcurl's own failure: exit 1, not 64 + code.
    outcome = grpcurl.run(shared_server.address, "describe", "larder.v1.NoSuchType")
    assert outcome.exit_code == 1 and outcome.stdout == "", outcome
    assert 'Symbol not found: larder.v1.NoSuchType' in outcome.stderr, outcome


# ---------------------------------------------------------------------------------------------
# invoke with JSON


def test_location_create_get_list_update_delete(grpcurl: Grpcurl, shared_server: RunningServer) -> None:
    address, service = shared_server.address, "larder.v1.LocationService"
    name = unique("Pantry")
    created = grpcurl.invoke(address, f"{service}/CreateLocation", {"location": {"name": name, "colorHex": "#aabbcc"}})
    # proto3 JSON: lowerCamelCase names, Timestamps as RFC 3339 in UTC.
    assert set(created) == {"id", "name", "colorHex", "createTime", "updateTime"}, created
    assert UUID_V4.fullmatch(created["id"]) and created["name"] == name and created["colorHex"] == "#AABBCC"
    assert RFC3339_UTC.fullmatch(created["createTime"]) and created["updateTime"] == created["createTime"]

    assert grpcurl.invoke(address, f"{service}/GetLocation", {"id": created["id"]}) == created
    listed = grpcurl.invoke(address, f"{service}/ListLocations", {})
    assert [location for location in listed["locations"] if location["id"] == created["id"]] == [created]

    # grpcurl 1.8.6 reads a FieldMask as the plain message {"paths": [...]} (proto field names),
    # not as proto3 JSON's "colorHex" string, which it refuses ("expecting start of JSON object").
    recoloured = grpcurl.invoke(address, f"{service}/UpdateLocation", {
        "location": {"id": created["id"], "name": "ignored, not in the mask", "colorHex": "#0a0b0c"},
        "updateMask": {"paths": ["color_hex"]}})
    assert recoloured["name"] == name and recoloured["colorHex"] == "#0A0B0C"
    assert recoloured["id"] == created["id"] and recoloured["createTime"] == created["createTime"]
    # As instants, not as text: protobuf JSON leaves out a zero fraction ("...:48Z" sorts after "...:48.090Z").
    assert RFC3339_UTC.fullmatch(recoloured["updateTime"])
    assert rfc3339_instant(recoloured["updateTime"]) >= rfc3339_instant(created["updateTime"])
    # grpcurl also takes the proto field names.
    renamed = grpcurl.invoke(address, f"{service}/UpdateLocation", {
        "location": {"id": created["id"], "name": name + " 2"}, "update_mask": {"paths": ["name"]}})
    assert renamed["name"] == name + " 2" and renamed["colorHex"] == "#0A0B0C"
    assert grpcurl.invoke(address, f"{service}/GetLocation", {"id": created["id"]}) == renamed

    assert grpcurl.invoke(address, f"{service}/DeleteLocation", {"id": created["id"]}) == {}  # Empty
    code, message = grpcurl.status(address, f"{service}/GetLocation", {"id": created["id"]})
    assert code == grpc.StatusCode.NOT_FOUND and created["id"] in message
    assert created["id"] not in [location["id"] for location in
                                 grpcurl.invoke(address, f"{service}/ListLocations", {})["locations"]]


def test_a_client_chosen_location_id_is_kept_lower_case(grpcurl: Grpcurl, shared_server: RunningServer) -> None:
    chosen = str(uuid.uuid4())
    created = grpcurl.invoke(shared_server.address, "larder.v1.LocationService/CreateLocation",
                             {"location": {"id": chosen.upper(), "name": unique("Shed"), "color_hex": "#123456"}})
    assert created["id"] == chosen


def test_meal_record_create_get_list_update_summarize_delete(grpcurl: Grpcurl,
                                                             start_server: Callable[..., RunningServer]) -> None:
    address, service = start_server().address, "larder.v1.MealRecordService"  # its own database: exact counts
    window = {"startTime": "2026-01-01T00:00:00Z", "endTime": "2026-01-02T00:00:00Z"}
    sent = [
        {"name": "Porridge", "calories": 0, "category": "MEAL_CATEGORY_BREAKFAST",
         "eatenAt": "2026-01-01T08:00:00.123456789Z"},
        {"name": "Soup", "calories": 300, "category": "MEAL_CATEGORY_LUNCH", "eatenAt": "2026-01-01T12:30:00Z"},
        # An enum may be sent as its number; it comes back as its name.
        {"name": "Stew", "calories": 650, "category": 3, "eatenAt": "2026-01-01T19:00:00.500Z"},
    ]
    made = [grpcurl.invoke(address, f"{service}/CreateMealRecord", {"mealRecord": meal}) for meal in sent]
    for meal, reply in zip(sent, made):
        assert UUID_V4.fullmatch(reply["id"]) and reply["name"] == meal["name"]
        assert reply["eatenAt"] == meal["eatenAt"]  # kept to the nanosecond
        assert RFC3339_UTC.fullmatch(reply["createTime"]) and reply["updateTime"] == reply["createTime"]
    assert "calories" not in made[0]  # proto3 JSON leaves out a zero...
    assert made[1]["calories"] == 300 and made[2]["category"] == "MEAL_CATEGORY_DINNER"
    with_defaults = grpcurl.invoke(address, f"{service}/GetMealRecord", {"id": made[0]["id"]}, flags=["-emit-defaults"])
    assert with_defaults == {**made[0], "calories": 0}  # ...unless asked to emit defaults
    assert grpcurl.invoke(address, f"{service}/GetMealRecord", {"id": made[1]["id"]}) == made[1]

    # Newest first, two a page; the token round-trips as JSON.
    first = grpcurl.invoke(address, f"{service}/ListMealRecords", {"pageSize": 2, **window})
    assert first["mealRecords"] == [made[2], made[1]] and first["nextPageToken"]
    rest = grpcurl.invoke(address, f"{service}/ListMealRecords",
                          {"pageSize": 2, "pageToken": first["nextPageToken"], **window})
    assert rest == {"mealRecords": [made[0]]}  # no token on the last page
    lunch = grpcurl.invoke(address, f"{service}/ListMealRecords", {"category": "MEAL_CATEGORY_LUNCH", **window})
    assert lunch == {"mealRecords": [made[1]]}

    updated = grpcurl.invoke(address, f"{service}/UpdateMealRecord", {
        "mealRecord": {"id": made[0]["id"], "calories": 450, "name": "not in the mask"},
        "updateMask": {"paths": ["calories"]}})
    assert updated["calories"] == 450 and updated["name"] == "Porridge" and updated["eatenAt"] == made[0]["eatenAt"]
    moved = grpcurl.invoke(address, f"{service}/UpdateMealRecord", {
        "mealRecord": {"id": made[0]["id"], "eatenAt": "2026-01-01T07:15:00.000000001Z",
                       "category": "MEAL_CATEGORY_SNACK"},
        "updateMask": {"paths": ["eaten_at", "category"]}})
    assert moved["eatenAt"] == "2026-01-01T07:15:00.000000001Z" and moved["category"] == "MEAL_CATEGORY_SNACK"
    assert moved["calories"] == 450

    # int64 fields are JSON strings, int32 ones numbers.
    summary = grpcurl.invoke(address, f"{service}/SummarizeMealRecords", window)
    assert summary["totalCalories"] == str(450 + 300 + 650) and summary["mealCount"] == 3
    assert [day["date"] for day in summary["days"]] == ["2026-01-01"]
    assert summary["categories"] == [
        {"category": "MEAL_CATEGORY_LUNCH", "totalCalories": "300", "mealCount": 1},
        {"category": "MEAL_CATEGORY_DINNER", "totalCalories": "650", "mealCount": 1},
        {"category": "MEAL_CATEGORY_SNACK", "totalCalories": "450", "mealCount": 1},
    ]

    assert grpcurl.invoke(address, f"{service}/DeleteMealRecord", {"id": made[0]["id"]}) == {}
    code, message = grpcurl.status(address, f"{service}/GetMealRecord", {"id": made[0]["id"]})
    assert code == grpc.StatusCode.NOT_FOUND and made[0]["id"] in message
    assert grpcurl.invoke(address, f"{service}/ListMealRecords", window) == {"mealRecords": [made[2], made[1]]}


# ---------------------------------------------------------------------------------------------
# Error statuses: exit code 64 + code, and the lean protocol's message


def _lean_status(stubs: Stubs, address: str, method: str, request: Dict[str, Any],
                 token: Optional[str] = None) -> tuple[int, str]:
    """What the lean protocol answers for the same request (the JSON parsed by protobuf's own
    JSON parser into the stub type the method takes; an update mask in grpcurl's {"paths": [...]}
    form is given to it as proto3 JSON's string)."""
    mask = request.get("updateMask")
    if isinstance(mask, dict):
        camel = [re.sub(r"_([a-z])", lambda m: m.group(1).upper(), path) for path in mask["paths"]]
        request = {**request, "updateMask": ",".join(camel)}
    service_name, method_name = method.split("/")
    package, _, short = service_name.rpartition(".")
    module = next(m for m in (stubs.location_pb2, stubs.meal_record_pb2, stubs.category_group_pb2,
                              stubs.item_category_pb2) if short in m.DESCRIPTOR.services_by_name)
    assert module.DESCRIPTOR.package == package
    input_type = module.DESCRIPTOR.services_by_name[short].methods_by_name[method_name].input_type
    message = json_format.ParseDict(request, message_factory.GetMessageClass(input_type)())
    return lean_call(address, f"/{method}", message.SerializeToString(), token)


def test_error_exit_codes_and_messages(grpcurl: Grpcurl, stubs: Stubs, shared_server: RunningServer) -> None:
    address = shared_server.address
    taken = unique("Taken")
    grpcurl.invoke(address, "larder.v1.LocationService/CreateLocation",
                   {"location": {"name": taken, "colorHex": "#123456"}})
    missing = str(uuid.uuid4())
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    # method, JSON request, status, a word the message holds
    cases: List[tuple[str, Dict[str, Any], grpc.StatusCode, str]] = [
        ("larder.v1.LocationService/CreateLocation", {"location": {"name": "  "}}, invalid, "name"),
        ("larder.v1.LocationService/CreateLocation", {"location": {"name": taken, "colorHex": "#123456"}},
         grpc.StatusCode.ALREADY_EXISTS, taken),
        ("larder.v1.LocationService/GetLocation", {"id": missing}, grpc.StatusCode.NOT_FOUND, missing),
        ("larder.v1.LocationService/GetLocation", {"id": "not-a-uuid"}, invalid, "id"),
        ("larder.v1.LocationService/DeleteLocation", {}, invalid, "id"),
        ("larder.v1.MealRecordService/CreateMealRecord", {"mealRecord": {"name": "x", "calories": -5}}, invalid,
         "calories"),
        ("larder.v1.MealRecordService/ListMealRecords", {"pageToken": "garbage"}, invalid, "page_token"),
        ("larder.v1.MealRecordService/GetMealRecord", {"id": missing}, grpc.StatusCode.NOT_FOUND, missing),
        ("larder.v1.CategoryGroupService/UpdateCategoryGroup",
         {"categoryGroup": {"id": missing, "name": "x"}, "updateMask": {"paths": ["no_such_field"]}}, invalid,
         "no_such_field"),
    ]
    for method, request, expected, word in cases:
        code, message = grpcurl.status(address, method, request)
        assert code == expected, (method, request, message)
        assert word in message, (method, request, message)
        assert (code.value[0], message) == _lean_status(stubs, address, method, request), (method, request)


def test_format_error_prints_the_status_as_json(grpcurl: Grpcurl, shared_server: RunningServer) -> None:
    missing = str(uuid.uuid4())
    outcome = grpcurl.run(shared_server.address, "larder.v1.LocationService/GetLocation", flags=["-format-error"],
                          data={"id": missing})
    assert outcome.exit_code == STATUS_EXIT_OFFSET + grpc.StatusCode.NOT_FOUND.value[0], outcome
    status = json.loads(outcome.stderr)
    assert status["code"] == grpc.StatusCode.NOT_FOUND.value[0] and missing in status["message"], outcome


# ---------------------------------------------------------------------------------------------
# Bearer token


def test_bearer_token(grpcurl: Grpcurl, protos: Protos, stubs: Stubs, start_server: Callable[..., RunningServer],
                      tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    server = start_server("--auth-token-file", str(token_file))
    address, method = server.address, "larder.v1.LocationService/ListLocations"
    good = "authorization: Bearer s3cret-token"
    from_disk = ["-import-path", str(PROTO_DIR), "-proto", "larder/v1/location.proto"]  # no reflection

    # No token: the call is UNAUTHENTICATED (exit 64 + 16), with the lean protocol's message;
    # whether grpcurl found the method through reflection (with the token) or from proto/.
    for flags in (["-reflect-header", good], from_disk):
        code, message = grpcurl.status(address, method, {}, flags=flags)
        assert code == grpc.StatusCode.UNAUTHENTICATED, flags
        assert (code.value[0], message) == _lean_status(stubs, address, method, {}), flags
    code, message = grpcurl.status(address, method, {}, flags=[*from_disk, "-H", "authorization: Bearer wrong"])
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert (code.value[0], message) == _lean_status(stubs, address, method, {}, "wrong")

    # Reflection needs the token too; its failure is grpcurl's own (exit 1).
    outcome = grpcurl.run(address, "list")
    assert outcome.exit_code == 1 and outcome.stdout == "", outcome
    assert "Failed to list services: rpc error: code = Unauthenticated" in outcome.stderr, outcome

    # -H sends the token on reflection and on the call.
    assert grpcurl.ok(address, "list", flags=["-H", good]).splitlines() == sorted(protos.services)
    assert grpcurl.invoke(address, method, {}, flags=["-H", good])["locations"]  # the default data
    made = grpcurl.invoke(address, "larder.v1.LocationService/CreateLocation",
                          {"location": {"name": unique("Vault"), "colorHex": "#654321"}}, flags=["-H", good])
    assert grpcurl.invoke(address, "larder.v1.LocationService/GetLocation", {"id": made["id"]},
                          flags=[*from_disk, "-H", good]) == made

    # Health needs no token (described from proto/, as reflection would need one).
    assert grpcurl.invoke(address, "grpc.health.v1.Health/Check", {},
                          flags=["-import-path", str(PROTO_DIR), "-proto", "grpc/health/v1/health.proto"]) == \
        {"status": "SERVING"}


# ---------------------------------------------------------------------------------------------
# Deadlines


# -max-time bounds the whole grpcurl run and is the call's deadline: grpc-go sends what is left
# of it as grpc-timeout, in the smallest unit that keeps the value to 8 digits, rounded up
# (grpc-go's grpcutil.EncodeDuration). Each of these lands in another unit (the test id), and each
# is far longer than any run, so none is a timing margin. ("n" needs less than 0.1 s: not here.)
@pytest.mark.parametrize("max_time", [
    "30",  # ~3e7 u
    "2000",  # ~2e6 m
    "200000",  # 2e5 S
    "1000000000",  # ~1.7e7 M
    "9000000000",  # 2.5e6 H (1.5e8 minutes do not fit): ~285 years
], ids=["u", "m", "S", "M", "H"])
def test_a_distant_deadline_in_every_unit_grpc_go_sends_is_accepted(grpcurl: Grpcurl, shared_server: RunningServer,
                                                                     max_time: str) -> None:
    flags = ["-max-time", max_time]
    address = shared_server.address
    assert grpcurl.invoke(address, "larder.v1.LocationService/ListLocations", {}, flags=flags)["locations"]
    assert grpcurl.invoke(address, "grpc.health.v1.Health/Check", {}, flags=flags) == {"status": "SERVING"}


def test_a_stream_still_open_at_its_deadline_ends_deadline_exceeded(grpcurl: Grpcurl,
                                                                    shared_server: RunningServer) -> None:
    # Health Watch sends the status and stays open, so the deadline is the only way it ends: with
    # DEADLINE_EXCEEDED, whichever side sees it first (the client's grpc-go, or the server's
    # 250 ms check; this cannot tell which). The 15 s must cover the whole run, dial and first
    # message included (from proto/ on disk, so no reflection round trip first): a run on a busy
    # machine that had no first message by then proves nothing, and is made again (at most 3).
    for _ in range(3):
        outcome = grpcurl.run(shared_server.address, "grpc.health.v1.Health/Watch",
                              flags=["-max-time", "15", "-import-path", str(PROTO_DIR),
                                     "-proto", "grpc/health/v1/health.proto"],
                              data={})
        if outcome.stdout.strip():
            break
    assert outcome.exit_code == STATUS_EXIT_OFFSET + grpc.StatusCode.DEADLINE_EXCEEDED.value[0], outcome
    assert json.loads(outcome.stdout) == {"status": "SERVING"}, outcome
    assert ERROR_TEXT.fullmatch(outcome.stderr) and "Code: DeadlineExceeded" in outcome.stderr, outcome
    assert grpcurl.invoke(shared_server.address, "grpc.health.v1.Health/Check", {}) == {"status": "SERVING"}


# ---------------------------------------------------------------------------------------------
# Health


def test_health_check(grpcurl: Grpcurl, protos: Protos, shared_server: RunningServer) -> None:
    address = shared_server.address
    assert grpcurl.invoke(address, "grpc.health.v1.Health/Check", {}) == {"status": "SERVING"}
    for service in protos.services:
        assert grpcurl.invoke(address, "grpc.health.v1.Health/Check", {"service": service}) == \
            {"status": "SERVING"}, service
    code, message = grpcurl.status(address, "grpc.health.v1.Health/Check", {"service": "no.such.Service"})
    assert code == grpc.StatusCode.NOT_FOUND and "no.such.Service" in message
