"""`load_llm(spec)`: one string picks the model everywhere (config, `--model`).

Specs:
- `embedded` — the bundled instruct model (Qwen2.5-Coder-1.5B-Instruct) in-process,
  loaded lazily, once per process; `embedded:gemma-270m` — the tiny base model;
- `openai:NAME` — model NAME on an OpenAI-compatible server. Base URL, first found:
  `$MEMAGENT_LLM_BASE_URL`, `llm.base_url` in config, `$OPENAI_BASE_URL`, else the
  client's default. API key from the env var named by `llm.api_key_env`
  (default `OPENAI_API_KEY`); a local server needs none.
- `scripted:PATH.json` — a JSON list of reply strings replayed in order (CLI tests),
  or `{"replies": [...], "verdicts": [...]}` with the yes/no verdicts too.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from memagent.core.config import LLMConfig
from memagent.core.errors import InvalidInput
from memagent.llm.base import LLM
from memagent.llm.scripted import ScriptedLLM

BASE_URL_ENVS = ("MEMAGENT_LLM_BASE_URL",)
FALLBACK_BASE_URL_ENV = "OPENAI_BASE_URL"
MAX_SCRIPT_BYTES = 4 * 1024 * 1024
_SPEC_MAX_CHARS = 4096
_MODEL_NAME = re.compile(r"^[^\s\x00-\x1f]{1,256}$")
_URL = re.compile(r"^https?://[^\s\x00-\x1f]+$")
SPEC_HELP = "use `embedded`, `embedded:gemma-270m`, `openai:MODEL` or `scripted:PATH.json`"


def load_llm(spec: str, config: LLMConfig | None = None) -> LLM:
    """The backend named by `spec`; `InvalidInput` for an unknown or malformed spec."""
    config = config or LLMConfig()
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInput(f"empty model spec: {SPEC_HELP}")
    if len(spec) > _SPEC_MAX_CHARS:
        raise InvalidInput(f"model spec is too long (over {_SPEC_MAX_CHARS} characters)")
    spec = spec.strip()
    kind, sep, arg = spec.partition(":")
    if kind == "embedded":
        from memagent.llm.models import DEFAULT_MODEL, MODELS

        model = arg if sep else DEFAULT_MODEL
        if model not in MODELS:
            raise InvalidInput(
                f"unknown embedded model {model[:80]!r}: "
                + ", ".join(f"embedded:{m}" for m in MODELS)
            )
        from memagent.llm.embedded import EmbeddedLLM

        return EmbeddedLLM(model=model, n_ctx=config.n_ctx, threads=config.threads)
    if kind == "openai" and sep:
        return _openai(arg, config)
    if kind == "scripted" and sep:
        return _scripted(arg)
    raise InvalidInput(f"unknown model spec {spec[:80]!r}: {SPEC_HELP}")


def _openai(name: str, config: LLMConfig) -> LLM:
    if not _MODEL_NAME.match(name):
        raise InvalidInput(
            f"bad model name {name[:80]!r} in `openai:NAME`: 1-256 characters, no spaces"
        )
    base_url = _base_url(config)
    if base_url is not None and not _URL.match(base_url):
        raise InvalidInput(
            f"bad LLM base URL {base_url[:120]!r}: it must start http:// or https://"
        )
    key = os.environ.get(config.api_key_env) or None
    if key is None and base_url is None:
        raise InvalidInput(
            f"`openai:{name}` needs a server: set ${config.api_key_env} for the hosted "
            "API, or a base URL (llm.base_url, $MEMAGENT_LLM_BASE_URL or $OPENAI_BASE_URL) "
            "for a local one"
        )
    from memagent.llm.openai_compat import OpenAICompatLLM

    return OpenAICompatLLM(
        name, base_url=base_url, api_key=key or "not-needed", timeout_s=config.timeout_s
    )


def _base_url(config: LLMConfig) -> str | None:
    for env in BASE_URL_ENVS:
        if value := os.environ.get(env):
            return value
    if config.base_url:
        return config.base_url
    return os.environ.get(FALLBACK_BASE_URL_ENV) or None


def _scripted(arg: str) -> LLM:
    if not arg.endswith(".json"):
        raise InvalidInput(f"`scripted:PATH` needs a .json file, got {arg[:120]!r}")
    path = Path(arg).expanduser()
    try:
        size = path.stat().st_size
        if size > MAX_SCRIPT_BYTES:
            raise InvalidInput(f"{path}: script is too large ({size} bytes > {MAX_SCRIPT_BYTES})")
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise InvalidInput(f"{path}: no such script file") from exc
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read the script ({exc.strerror})") from exc
    try:
        replies = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{path}: not valid UTF-8 JSON ({exc})") from exc
    verdicts = None
    if isinstance(replies, dict) and set(replies) <= {"replies", "verdicts"}:
        replies, verdicts = replies.get("replies", []), replies.get("verdicts")
    if not _strings(replies) or (verdicts is not None and not _strings(verdicts)):
        raise InvalidInput(
            f"{path}: a script is a JSON list of reply strings, or an object with "
            '"replies" and "verdicts" (yes/no answers: "yes", "no", "0.3") lists of strings'
        )
    return ScriptedLLM(replies, verdicts=verdicts)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(r, str) for r in value)
