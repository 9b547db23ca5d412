"""The server's /metrics as Prometheus sees it, parsed with prometheus_client's own parser.

The grpc_server_* families must be those of the grpc-ecosystem go-grpc-prometheus
middleware (names, types, labels, grpc_code spelling, cumulative buckets), so that
dashboards written for it work unchanged; the counts must move with real calls.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
import urllib.request
from typing import Dict, Iterable, Tuple

import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from larder_client import LarderError, StatusCode
from larder_client._gen.larder.v1.location_pb2 import GetLocationRequest, ListLocationsRequest

METRICS_LISTENING = re.compile(r'\bevent="?metrics_listening"?\b.*\baddress="?([^"\s]+)"?')
GRPC_LABELS = {"grpc_type", "grpc_service", "grpc_method"}
# Go's codes.Code.String(), the values go-grpc-prometheus puts in grpc_code.
GO_CODES = {
    "OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
    "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
    "Internal", "Unavailable", "DataLoss", "Unauthenticated",
}
# Prometheus's default buckets (go-grpc-prometheus's default) are among the bounds.
DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
LIST = ("larder.v1.LocationService", "ListLocations")
GET = ("larder.v1.LocationService", "GetLocation")

# The parser names a counter family without its _total suffix; its samples keep it.
FAMILY_TYPES = {
    "grpc_server_started": "counter",
    "grpc_server_handled": "counter",
    "grpc_server_msg_received": "counter",
    "grpc_server_msg_sent": "counter",
    "grpc_server_handling_seconds": "histogram",
    "larder_unknown_method_calls": "counter",
    "larder_calls_in_flight": "gauge",
    "larder_connections_open": "gauge",
    "larder_memory_held_bytes": "gauge",
    "larder_parked_calls": "gauge",
    "larder_calls_parked": "counter",
    "larder_connections_accepted": "counter",
    "larder_received_bytes": "counter",
    "larder_sent_bytes": "counter",
    "larder_build_info": "gauge",
    "process_cpu_seconds": "counter",
    "process_open_fds": "gauge",
    "process_max_fds": "gauge",
    "process_virtual_memory_bytes": "gauge",
    "process_resident_memory_bytes": "gauge",
    "process_start_time_seconds": "gauge",
}


def metrics_address(server) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in list(server.log):
            match = METRICS_LISTENING.search(line)
            if match:
                return match.group(1)
        time.sleep(0.05)
    pytest.fail("no event=metrics_listening line:\n" + "\n".join(server.log))


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process `pid` (/proc/PID/stat), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scrape(address: str) -> Dict[str, Metric]:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=30) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        text = response.read().decode("utf-8")
    families = list(text_string_to_metric_families(text))
    names = [family.name for family in families]
    assert len(names) == len(set(names)), "each family once"
    return {family.name: family for family in families}


def value(family: Metric, sample: str, **labels: str) -> float:
    found = [s.value for s in family.samples if s.name == sample and s.labels == labels]
    assert len(found) == 1, f"{sample}{labels}: {len(found)} samples"
    return found[0]


def method_labels(service_method: Tuple[str, str]) -> Dict[str, str]:
    return {"grpc_type": "unary", "grpc_service": service_method[0], "grpc_method": service_method[1]}


def methods_of(family: Metric, sample: str) -> Iterable[Tuple[str, str]]:
    return {(s.labels["grpc_service"], s.labels["grpc_method"]) for s in family.samples if s.name == sample}


def test_metrics_have_the_names_types_and_labels_dashboards_expect(start_server, server_binary):
    started_at = time.time()
    server = start_server("--metrics-listen", "127.0.0.1:0")
    cpu_before = cpu_seconds(server.process.pid)
    families = scrape(metrics_address(server))
    cpu_after = cpu_seconds(server.process.pid)

    for name, kind in FAMILY_TYPES.items():
        assert name in families, name
        assert families[name].type == kind, name
    assert not [name for name in families if name.startswith("larder_call")
                and name not in FAMILY_TYPES], "larder_calls_total and larder_call_duration_seconds are gone"

    # Every served method is there before any call, as go-grpc-prometheus's InitializeMetrics does.
    started = families["grpc_server_started"]
    served = methods_of(started, "grpc_server_started_total")
    assert {LIST, GET, ("grpc.health.v1.Health", "Check"), ("larder.admin.v1.Admin", "GetServerInfo"),
            ("larder.reflection.v1.ServerReflection", "ListServices")} <= served
    assert len(served) == 29
    streams = {("grpc.health.v1.Health", "Watch"): "server_stream",
               ("grpc.reflection.v1.ServerReflection", "ServerReflectionInfo"): "bidi_stream",
               ("grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo"): "bidi_stream"}
    assert set(streams) <= served
    for sample in started.samples:
        method = (sample.labels["grpc_service"], sample.labels["grpc_method"])
        assert set(sample.labels) == GRPC_LABELS and sample.labels["grpc_type"] == streams.get(method, "unary"), method
        assert sample.value == 0
    for name in ("grpc_server_msg_received", "grpc_server_msg_sent"):
        assert methods_of(families[name], name + "_total") == served
    handled = families["grpc_server_handled"]
    for method in served:
        codes = {s.labels["grpc_code"] for s in handled.samples
                 if (s.labels["grpc_service"], s.labels["grpc_method"]) == method}
        assert codes == GO_CODES, method
    for sample in handled.samples:
        assert set(sample.labels) == GRPC_LABELS | {"grpc_code"} and sample.name == "grpc_server_handled_total"

    histogram = families["grpc_server_handling_seconds"]
    assert methods_of(histogram, "grpc_server_handling_seconds_count") == served
    bounds = [s.labels["le"] for s in histogram.samples
              if s.name == "grpc_server_handling_seconds_bucket" and s.labels["grpc_method"] == "ListLocations"]
    assert bounds[-1] == "+Inf"
    as_numbers = [float(b) for b in bounds[:-1]]
    assert as_numbers == sorted(as_numbers) and set(DEFAULT_BUCKETS) <= set(as_numbers)

    build = families["larder_build_info"].samples
    assert len(build) == 1 and build[0].value == 1
    assert set(build[0].labels) == {"version", "commit", "protocol_version"}
    version = subprocess.run([str(server_binary), "--version"], capture_output=True, text=True, timeout=60).stdout
    labels = build[0].labels
    assert version == f"larder-server {labels['version']} (commit {labels['commit']}, protocol {labels['protocol_version']})\n"
    assert labels["protocol_version"] == "larder.rpc.v1"

    resident = value(families["process_resident_memory_bytes"], "process_resident_memory_bytes")
    assert 1 << 20 < resident <= value(families["process_virtual_memory_bytes"], "process_virtual_memory_bytes")
    assert 3 <= value(families["process_open_fds"], "process_open_fds") <= value(families["process_max_fds"], "process_max_fds")
    # The kernel's own count around the scrape (it may be 0 yet: CPU time is sampled at clock
    # ticks, and a server that has done little may not have been running at one).
    assert cpu_before <= value(families["process_cpu_seconds"], "process_cpu_seconds_total") <= cpu_after
    start = value(families["process_start_time_seconds"], "process_start_time_seconds")
    assert started_at - 5 <= start <= time.time() + 1


def test_counts_move_with_real_calls(start_server):
    server = start_server("--metrics-listen", "127.0.0.1:0")
    address = metrics_address(server)
    before = scrape(address)
    with server.client() as client:
        for _ in range(3):
            client.call("/larder.v1.LocationService/ListLocations", ListLocationsRequest())
        with pytest.raises(LarderError) as error:
            client.call("/larder.v1.LocationService/GetLocation", GetLocationRequest(id="not-a-uuid"))
        assert error.value.code == StatusCode.INVALID_ARGUMENT
        with pytest.raises(LarderError) as error:
            client.call("/larder.v1.Nope/Nothing")
        assert error.value.code == StatusCode.UNIMPLEMENTED
        after = scrape(address)
        assert value(after["larder_connections_open"], "larder_connections_open") == 1
    assert value(after["larder_calls_in_flight"], "larder_calls_in_flight") == 0

    def delta(name: str, sample: str, **labels: str) -> float:
        return value(after[name], sample, **labels) - value(before[name], sample, **labels)

    list_labels, get_labels = method_labels(LIST), method_labels(GET)
    assert delta("grpc_server_started", "grpc_server_started_total", **list_labels) == 3
    assert delta("grpc_server_handled", "grpc_server_handled_total", **list_labels, grpc_code="OK") == 3
    assert delta("grpc_server_msg_received", "grpc_server_msg_received_total", **list_labels) == 3
    assert delta("grpc_server_msg_sent", "grpc_server_msg_sent_total", **list_labels) == 3
    assert delta("grpc_server_handling_seconds", "grpc_server_handling_seconds_count", **list_labels) == 3
    assert delta("grpc_server_handling_seconds", "grpc_server_handling_seconds_sum", **list_labels) > 0
    assert delta("grpc_server_handling_seconds", "grpc_server_handling_seconds_bucket", **list_labels, le="+Inf") == 3

    assert delta("grpc_server_started", "grpc_server_started_total", **get_labels) == 1
    assert delta("grpc_server_handled", "grpc_server_handled_total", **get_labels, grpc_code="InvalidArgument") == 1
    assert delta("grpc_server_handled", "grpc_server_handled_total", **get_labels, grpc_code="OK") == 0
    assert delta("grpc_server_msg_sent", "grpc_server_msg_sent_total", **get_labels) == 0, "no reply message on error"

    # Cumulative buckets: non-decreasing, ending at the count.
    buckets = [s.value for s in after["grpc_server_handling_seconds"].samples
               if s.name == "grpc_server_handling_seconds_bucket" and s.labels["grpc_method"] == "ListLocations"]
    assert buckets == sorted(buckets) and buckets[-1] == 3

    # An unserved name is no grpc_server_* series (go-grpc-prometheus never sees one), but is counted.
    assert "larder.v1.Nope" not in {service for service, _ in methods_of(after["grpc_server_started"],
                                                                         "grpc_server_started_total")}
    assert delta("larder_unknown_method_calls", "larder_unknown_method_calls_total", grpc_code="Unimplemented") == 1
    assert delta("larder_connections_accepted", "larder_connections_accepted_total") == 1
    assert delta("larder_received_bytes", "larder_received_bytes_total") > 0
    assert delta("larder_sent_bytes", "larder_sent_bytes_total") > 0
