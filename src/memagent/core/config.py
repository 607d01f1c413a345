"""`config.toml` of a memory home, validated by pydantic.

Every section has defaults, so a missing or partial file is fine; a file that
does not parse, or holds a wrong type, is reported (file, line, what) and never
overwritten.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memagent.core.errors import CorruptFile

DEFAULT_MAX_FILE_BYTES = 1024 * 1024


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LimitsConfig(_Section):
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, gt=0)
    max_search_results: int = Field(default=100, gt=0)
    max_list_entries: int = Field(default=1000, gt=0)


class LLMConfig(_Section):
    model: str = "embedded"
    """`embedded`, or `openai:NAME` for an OpenAI-compatible server."""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = Field(default=120.0, gt=0)
    """Per-request timeout for an OpenAI-compatible server."""
    n_ctx: int = Field(default=4096, ge=256)
    """Context window of the embedded model."""
    threads: int = Field(default=0, ge=0)
    """CPU threads of the embedded model; 0: chosen when it loads, from the free cores
    (`memagent.llm.embedded.auto_threads`)."""


class EmbeddingsConfig(_Section):
    enabled: bool = True


class SearchConfig(_Section):
    """Recall's knobs set by name, on their defaults: any knob of the ranking's
    stages or signals (listed below, from `memagent.index.params.SearchParams`; a
    new signal's knobs are taken with no change here). The table is read as plain
    numbers here and checked against the knobs when recall runs: an unknown knob
    or a bad value fails there, naming `search.KNOB`."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, bool | int | float] = Field(init=False)


class StoreConfig(_Section):
    backend: Literal["local", "postgres"] = "local"
    url: str | None = None


class AgentConfig(_Section):
    """How the agent answers: defaults of `memagent chat` / `memagent ask` (flags
    override them), `/v1/chat` and `Agent` (`Agent(home, config=…)` or its keyword
    overrides take another, validated here)."""

    persona: str = "BASE"
    """The active persona: a file `personalities/NAME.md` (`memagent persona use`)."""
    mode: Literal["json", "python"] = "json"
    """How the model acts: JSON actions or sandboxed Python."""
    max_steps: int = Field(default=6, ge=1, le=50)
    """Model steps a turn may take before the agent gives its honest fallback reply."""
    planning_interval: int | None = Field(default=None, ge=1)
    """Every N steps the model first writes or updates a plan; none: no planning."""
    prompt_set: str | None = None
    """The prompts (`memagent/agent/prompts/NAME.yaml`: `instruct`, `qa`, `small`, `json`,
    `python`); none: the model's own (`instruct` for the embedded model in JSON mode,
    `small` for its tiny fallback, else the mode's)."""
    retrieval: bool = True
    """Put recalled memory in context before each turn; false: the model answers
    without it (the benchmarks' baseline)."""
    structured: bool = True
    """Ask for each step as one JSON object under a schema; false: tagged text
    (`<think>`, `<actions>`, `<reply>`), for a backend that takes no schema."""
    context_tokens: int = Field(default=1200, ge=100)
    """Budget of the memory put in context before each user turn."""
    history_turns: int = Field(default=6, ge=0)
    recall_k: int = Field(default=5, ge=0, le=50)
    recall_min_ratio: float = Field(default=0.5, ge=0.0, le=1.0)
    """Recalled memories scoring under this fraction of the best hit stay out of context."""
    learn_profile: bool = True
    """Run the profile pipeline on each user message (in the background)."""
    verify_min: float = Field(default=0.66, ge=0.0, le=1.0)
    """Grounding check (`memagent.agent.verify`, prompt sets with a `verify` template):
    refuse when the model's P(yes) that the recalled lines answer the question is
    under this; 0 turns the check off. 0.66 (with the contrast probe below): picked
    by leave-one-conversation-out on 200 LoCoMo dev questions (`bench.qa_decide`;
    held out: answerable refused 0.072 against 0.176 at the former 0.76;
    docs/experiments/2026-11-26-qa-locomo.md)."""
    chat_verify_min: float = Field(default=0.55, ge=0.0, le=1.0)
    """The grounding check's threshold in the chat prompt sets (`instruct`: chat,
    default `ask`, `Agent.run`, `/v1/chat`), for questions about the user's own
    life; 0 turns it off there. Its own value: the chat prompt is longer than the
    `qa` set's, and the model's P(yes) runs lower on it. 0.55: picked by
    leave-one-scenario-out on bench.near_miss (embedded model, 40 answerable
    questions at P(yes) 0.57-0.84, the near misses the focus check leaves at
    0.32-0.57; a small sample, see the bench)."""
    focus_check: bool = True
    """Focus check (`memagent.agent.focus`): a question about "my W" (a relation, pet
    or thing of the user's) is refused without a model call when no recalled line
    mentions W, or the attribute asked of it ("my sister's name")."""
    contrast_below: float = Field(default=1.0, ge=0.0, le=1.0)
    """Contrast probe (`memagent.agent.verify`): when the grounding check passes with
    P(yes) under this and the question names one speaker of the recalled lines, the
    same question about the other speaker is checked too; 0 turns it off. 1.0 (every
    such question), margin 0.05: picked with `verify_min` by the same
    cross-validation (four folds of five)."""
    contrast_margin: float = Field(default=0.05, ge=-1.0, le=1.0)
    """...and the reply is a refusal when that question's P(yes) is at least this
    much higher than the question's own."""


class QuotasConfig(_Section):
    """How much one memory home may hold (0: no limit). A write past one is refused
    (`QuotaExceeded`, HTTP 507) and nothing is written; deleting always works."""

    max_bytes: int = Field(default=0, ge=0)
    """Bytes of memory files (notes, profile, chunks, personas, state; not the
    derived index, not the ops log)."""
    max_chunks: int = Field(default=0, ge=0)
    max_notes: int = Field(default=0, ge=0)
    max_log_bytes: int = Field(default=0, ge=0)
    """Bytes of the ops log: all segments and stored contents (`log/`)."""


class Config(BaseModel):
    model_config = ConfigDict(extra="allow")

    limits: LimitsConfig = LimitsConfig()
    quotas: QuotasConfig = QuotasConfig()
    llm: LLMConfig = LLMConfig()
    embeddings: EmbeddingsConfig = EmbeddingsConfig()
    search: SearchConfig = SearchConfig()
    store: StoreConfig = StoreConfig()
    agent: AgentConfig = AgentConfig()

    def to_toml(self) -> str:
        return tomli_w.dumps(self.model_dump(exclude_none=True))


def load_config(path: Path) -> Config:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise CorruptFile(str(path), f"not valid TOML: {exc}", line) from exc
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CorruptFile(str(path), f"{where}: {first['msg']}") from exc
