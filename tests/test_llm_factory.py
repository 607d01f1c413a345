from __future__ import annotations

import json
from pathlib import Path

import pytest

from memagent.core.config import LLMConfig
from memagent.core.errors import InvalidInput
from memagent.llm import LLM, ScriptedLLM, load_llm
from memagent.llm.embedded import EmbeddedLLM
from memagent.llm.factory import MAX_SCRIPT_BYTES
from memagent.llm.openai_compat import OpenAICompatLLM

FIXTURES = Path(__file__).parent / "fixtures" / "llm"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MEMAGENT_LLM_BASE_URL", "MY_KEY"):
        monkeypatch.delenv(var, raising=False)


def test_scripted_spec_replays_file() -> None:
    llm = load_llm(f"scripted:{FIXTURES / 'replies.json'}")
    assert isinstance(llm, ScriptedLLM) and isinstance(llm, LLM)
    assert llm.chat([{"role": "user", "content": "hi"}]).text == "first reply"
    assert llm.chat([{"role": "user", "content": "hi"}]).text == "<reply>second</reply>"


def test_scripted_spec_with_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"replies": ["an answer"], "verdicts": ["no", "0.8"]}))
    llm = load_llm(f"scripted:{path}")
    assert isinstance(llm, ScriptedLLM)
    assert llm.yes_probability([{"role": "user", "content": "yes or no?"}]).p_yes == 0.0
    assert llm.chat([{"role": "user", "content": "hi"}]).text == "an answer"
    assert llm.yes_probability([{"role": "user", "content": "yes or no?"}]).p_yes == 0.8


def test_embedded_spec_is_lazy() -> None:
    llm = load_llm("embedded", LLMConfig(n_ctx=1024, threads=1))
    assert isinstance(llm, EmbeddedLLM)
    assert (llm.n_ctx, llm.threads) == (1024, 1)
    assert not llm.loaded  # nothing loads until the first request


def test_openai_base_url_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/fallback/")
    llm = load_llm("openai:llama3", LLMConfig())
    assert isinstance(llm, OpenAICompatLLM)
    assert llm.base_url.startswith("http://127.0.0.1:9/fallback")
    assert llm.name == "openai:llama3" and llm.model == "llama3"
    cfg = LLMConfig(base_url="http://127.0.0.1:9/config/")
    assert load_llm("openai:m", cfg).base_url.startswith("http://127.0.0.1:9/config")  # type: ignore[attr-defined]
    monkeypatch.setenv("MEMAGENT_LLM_BASE_URL", "http://127.0.0.1:9/env/")
    assert load_llm("openai:m", cfg).base_url.startswith("http://127.0.0.1:9/env")  # type: ignore[attr-defined]


def test_openai_model_names_keep_their_colons() -> None:
    llm = load_llm("openai:llama3.2:1b", LLMConfig(base_url="http://127.0.0.1:11434/v1"))
    assert llm.model == "llama3.2:1b"  # type: ignore[attr-defined]


def test_openai_key_from_configured_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test")
    llm = load_llm("openai:gpt-x", LLMConfig(api_key_env="MY_KEY"))
    assert llm._client.api_key == "sk-test"  # type: ignore[attr-defined]


def test_openai_needs_key_or_url() -> None:
    with pytest.raises(InvalidInput, match="needs a server"):
        load_llm("openai:gpt-x")


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "   ",
        "gpt4",
        "embedded:extra",
        "openai",
        "openai:",
        "openai:has space",
        "openai:" + "x" * 300,
        "scripted",
        "scripted:replies.txt",
        "Embedded",
        "x" * 10_000,
        "openai:bad\x00name",
    ],
)
def test_malformed_specs_rejected(spec: str) -> None:
    with pytest.raises(InvalidInput):
        load_llm(spec, LLMConfig(base_url="http://127.0.0.1:9/v1"))


def test_non_string_spec_rejected() -> None:
    with pytest.raises(InvalidInput):
        load_llm(None)  # type: ignore[arg-type]


def test_bad_base_url_rejected() -> None:
    with pytest.raises(InvalidInput, match="base URL"):
        load_llm("openai:m", LLMConfig(base_url="file:///etc/passwd"))


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"not json", "not valid UTF-8 JSON"),
        (b"\xff\xfe garbage", "not valid UTF-8 JSON"),
        (b'{"a": 1}', "JSON list of reply strings"),
        (b'["ok", 3]', "JSON list of reply strings"),
        (b'{"replies": ["ok"], "verdicts": [0.5]}', "JSON list of reply strings"),
        (b'{"replies": "ok"}', "JSON list of reply strings"),
        (b'{"replies": [], "extra": []}', "JSON list of reply strings"),
    ],
)
def test_bad_script_files(tmp_path: Path, content: bytes, match: str) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(content)
    before = path.read_bytes()
    with pytest.raises(InvalidInput, match=match):
        load_llm(f"scripted:{path}")
    assert path.read_bytes() == before


def test_missing_and_oversized_script(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such script"):
        load_llm(f"scripted:{tmp_path / 'nope.json'}")
    big = tmp_path / "big.json"
    big.write_text(json.dumps(["x" * (MAX_SCRIPT_BYTES + 10)]))
    with pytest.raises(InvalidInput, match="too large"):
        load_llm(f"scripted:{big}")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(InvalidInput, match="cannot read"):
        load_llm(f"scripted:{tmp_path / 'dir.json'}")
