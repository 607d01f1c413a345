"""The OpenAPI document: committed, served, and fuzzed with schemathesis against a
live loopback server (a bounded run, so CI runs it through the ordinary test command).

Regenerate the committed copy with `memagent openapi --out docs/openapi.json`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import Case

from memagent.llm import ScriptedLLM
from memagent.server import KeyStore, ServerSettings, create_app, openapi_document
from memagent.server.testing import LiveServer

DOC = Path(__file__).resolve().parents[1] / "docs" / "openapi.json"
# Schema-valid input may still break a rule the schema cannot state (a path that
# leaves the vault, a profile item that does not exist): that is a 400 or 404
# problem, never a 422 (which would mean the document is wrong) nor a 5xx.
CONFIG = schemathesis.Config.from_dict(
    {
        "checks": {
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "400", "401", "403", "404", "409", "429"]
            }
        }
    }
)
schema = schemathesis.openapi.from_path(str(DOC), config=CONFIG)


def test_committed_document_is_current(tmp_path: Path) -> None:
    committed = json.loads(DOC.read_text(encoding="utf-8"))
    assert committed == openapi_document(tmp_path), (
        "docs/openapi.json is stale: run `memagent openapi --out docs/openapi.json`"
    )


def test_served_document_is_the_committed_one(tmp_path: Path) -> None:
    with LiveServer(create_app(tmp_path, ServerSettings(mcp=False))) as live:
        served = httpx.get(f"{live.url}/openapi.json", timeout=60).json()  # hang guard
    assert served == json.loads(DOC.read_text(encoding="utf-8"))


def test_every_error_response_is_a_problem_document() -> None:
    doc = json.loads(DOC.read_text(encoding="utf-8"))
    for path, item in doc["paths"].items():
        for method, op in item.items():
            for status, response in op["responses"].items():
                if int(status) >= 400:
                    assert list(response["content"]) == ["application/problem+json"], (
                        path,
                        method,
                        status,
                    )


@pytest.fixture(scope="module")
def fuzz_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    root = tmp_path_factory.mktemp("fuzz") / "server"
    key, _ = KeyStore(root).create(user="fuzz", admin=True)
    settings_ = ServerSettings(
        mcp=False, embeddings=False, rate_per_second=10_000, rate_burst=10_000
    )
    no_facts = ScriptedLLM(fn=lambda _messages, _schema: '{"facts": []}')
    with LiveServer(create_app(root, settings_, llm=no_facts)) as live:
        yield live.url, key


@schema.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_document(case: Case, fuzz_target: tuple[str, str]) -> None:
    url, key = fuzz_target
    case.call_and_validate(base_url=url, headers={"Authorization": f"Bearer {key}"})
