"""The reproductions of issue 16, each a prompt, clear error and a living host."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.sandbox import Limits, Session


def error_of(code: str, **limits: float) -> str:
    r = Session(limits=Limits(**limits)).run(code)  # type: ignore[arg-type]
    assert r.error is not None, r
    assert r.result is None
    return r.error


@pytest.mark.parametrize(
    "code", ["2**20000", "[1, {'a': (2**20000,)}]", "FINAL(2**20000)", "str(2**20000)"]
)
def test_int_to_str_digit_limit_is_a_sandbox_error(code: str) -> None:
    assert "integer string conversion" in error_of(code)


def test_int_to_str_through_the_cli_is_json_not_a_traceback() -> None:
    out = CliRunner().invoke(app, ["sandbox", "run"], input="2**20000\n")
    assert out.exit_code == 1
    body = json.loads(out.stdout)
    assert body["result"] is None
    assert body["error"].startswith("ValueError: Exceeds the limit")


def test_big_int_within_the_digit_limit_still_renders() -> None:
    r = Session().run("2**14000")
    assert r.error is None and r.to_json()["result"] == str(2**14000)
