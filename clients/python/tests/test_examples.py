"""The README's examples are the files in examples/, they run against the real server, and mypy
--strict both accepts them and catches what the typed API is meant to catch."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT_ROOT = Path(__file__).resolve().parents[1]
REPO_ROOT = CLIENT_ROOT.parents[1]
EXAMPLES = CLIENT_ROOT / "examples"
README_ADDRESS = "127.0.0.1:7411"
needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (pip install -r requirements-dev.txt)")


def readme_blocks() -> list[str]:
    text = (CLIENT_ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_every_python_block_of_the_readme_is_an_example_file():
    examples = {p.name: p.read_text(encoding="utf-8") for p in EXAMPLES.glob("*.py")}
    blocks = readme_blocks()
    assert len(blocks) >= 2
    for block in blocks:
        assert block in examples.values(), f"README block is not a file in examples/ (mypy checks those):\n{block}"


def test_the_readme_says_calls_have_no_deadline_by_default():
    """The default timeout is None (no deadline): the README says so near the first example
    rather than only by implication (audit 14 D1), and how to set one."""
    import inspect

    from larder_client import AsyncLarderClient, LarderClient

    for cls in (LarderClient, AsyncLarderClient):
        assert inspect.signature(cls).parameters["timeout"].default is None
    text = (CLIENT_ROOT / "README.md").read_text(encoding="utf-8")
    said = text.find("**Calls have no deadline by default.** The client's `timeout` defaults to\n`None`")
    assert 0 < said < text.find("`examples/async_quickstart.py`"), "not said right after the first example"
    paragraph = text[said:text.find("\n\n", said)]
    assert "LarderClient(address, timeout=5)" in paragraph and "timeout=" in paragraph


@pytest.mark.parametrize("name", ["quickstart.py", "async_quickstart.py"])
def test_the_examples_run_against_the_server(shared_server, tmp_path, name):
    source = (EXAMPLES / name).read_text(encoding="utf-8")
    assert README_ADDRESS in source
    script = tmp_path / name
    # The README's short timeouts (5 s, 0.5 s) are for a quiet machine; CI runs this beside builds.
    assert re.search(r"timeout=\d", source)
    source = re.sub(r"timeout=[\d.]+", "timeout=120", source)
    script.write_text(source.replace(README_ADDRESS, shared_server.address), encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    if name == "quickstart.py":
        assert "Oatmeal 350" in result.stdout  # the meal it created, found by the page iterator
        assert result.stdout.rstrip().splitlines()[-1].startswith("True ")  # NOT_FOUND after the delete


def run_mypy(tmp_path: Path, code: str) -> str:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(code, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(REPO_ROOT / ".build" / "mypy"),
                             "--no-error-summary", str(snippet)], capture_output=True, text=True, timeout=600)
    return result.stdout + result.stderr


@needs_mypy
def test_mypy_sees_typed_requests_and_responses(tmp_path):
    output = run_mypy(tmp_path, """
from larder_client import AsyncLarderClient, LarderClient

def sync(client: LarderClient) -> None:
    reveal_type(client.list_locations().locations[0].color_hex)
    reveal_type(client.get_location.future(id="x"))
    reveal_type(client.get_metrics())
    for meal in client.iter_meal_records():
        reveal_type(meal)
    client.get_location(idx="x")
    client.create_meal_record(meal_record={"name": "x", "calories": "many"})

async def concurrent(client: AsyncLarderClient) -> None:
    reveal_type(await client.check())
""")
    assert 'Revealed type is "builtins.str"' in output or 'Revealed type is "str"' in output, output
    assert "Future[larder_client._gen.larder.v1.location_pb2.Location]" in output, output
    assert 'Revealed type is "larder_client._gen.larder.admin.v1.admin_pb2.Metrics"' in output, output
    assert 'Revealed type is "larder_client._gen.larder.v1.meal_record_pb2.MealRecord"' in output, output
    assert 'Revealed type is "larder_client._gen.grpc.health.v1.health_pb2.HealthCheckResponse"' in output, output
    assert 'Unexpected keyword argument "idx"' in output, output
    assert 'Argument "meal_record"' in output and "MealRecordDict" in output, output
    assert output.count("error:") == 2, output


@pytest.mark.skipif(importlib.util.find_spec("jedi") is None,
                    reason="jedi is not installed (pip install -r requirements-dev.txt)")
def test_an_editor_completes_methods_their_parameters_and_the_fields_they_return():
    """jedi (the completion engine of many editors) reads the generated Protocols as an IDE would."""
    import jedi

    head = 'from larder_client import LarderClient\nclient = LarderClient("127.0.0.1:7411", connect=False)\n'

    def complete(tail: str) -> list[str]:
        source = head + tail
        lines = source.splitlines()
        return [c.name for c in jedi.Script(source, path="snippet.py").complete(len(lines), len(lines[-1]))]

    assert "list_locations" in complete("client.list_loc")
    assert "locations" in complete("client.list_locations().loc")
    assert "color_hex" in complete('client.get_location(id="x").col')
    assert "result" in complete('client.get_location.future(id="x").res')
    assert "eaten_at" in complete("for meal in client.iter_meal_records():\n    meal.eat")
    assert "connections_open" in complete("client.get_metrics().connections_o")
    source = head + "client.get_location("
    signatures = jedi.Script(source, path="snippet.py").get_signatures(3, len("client.get_location("))
    assert signatures and [p.name for p in signatures[0].params] == ["request", "id", "timeout", "metadata"]
