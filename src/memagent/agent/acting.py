"""What the agent's steps do: a JSON batch of actions, or Python in the sandbox.

Both are all-or-nothing over the memory: a batch whose action fails, or code
that raises or runs out of budget, has its vault writes rolled back and its tool
writes (`remember`, `forget`) undone before the model sees the result.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

from pydantic import ValidationError

from memagent.actions import (
    SPECS,
    ActionOutcome,
    ActionOutcomeJson,
    ActionsInvalid,
    BaseAction,
    run_actions,
    validate_actions,
    vault_tools,
)
from memagent.agent.memory import MemoryAccess
from memagent.agent.tools import Tool, ToolCard, ToolRegistry
from memagent.core import MemagentError, MemoryHome
from memagent.core.errors import DeadlineExceeded
from memagent.core.jsontext import JsonObject

if TYPE_CHECKING:
    from memagent.sandbox import RunResult


def undo_writes(memory: MemoryAccess, done_tools: list[tuple[str, Any]]) -> list[str]:
    """Roll back the vault's open batch and undo the tools' writes, newest first;
    returns what the vault restored."""
    restored = memory.vault.rollback()
    for name, value in reversed(done_tools):
        memory.undo_tool(name, value)
    return restored


class BatchJson(TypedDict):
    """`BatchResult.to_json`, what the model reads of a batch."""

    ok: bool
    applied: NotRequired[bool]
    rolled_back: NotRequired[list[str]]
    error: NotRequired[str | None]
    results: NotRequired[list[ActionOutcomeJson] | None]
    writes: NotRequired[bool]


@dataclass
class BatchResult:
    """What a JSON-mode step's batch did; all of it, or (on a failure) none of it.

    `results` is None when nothing ran (an invalid batch: `error` says why);
    `rolled_back` lists the files a failed batch put back; `writes` says whether
    the batch held a write (a failed one makes the fallback reply say so).
    `to_json` is what the model reads.
    """

    ok: bool
    results: list[ActionOutcome] | None = None
    error: str | None = None
    writes: bool = False
    rolled_back: list[str] = field(default_factory=list)

    def to_json(self) -> BatchJson:
        results = None if self.results is None else [r.to_json() for r in self.results]
        if self.ok:
            return {"ok": True, "results": results}
        out: BatchJson = {"ok": False, "applied": False}
        if results is not None:
            out["rolled_back"] = self.rolled_back
        out["error"] = self.error
        if results is not None:
            out["results"] = results
        out["writes"] = self.writes
        return out


def _tool_result(call: _ToolCall) -> ActionOutcome:
    entry = ActionOutcome(call.index, call.tool.name, assign_to=call.assign_to or None)
    try:
        entry.value, entry.ok = call.tool.call(call.args), True
    except MemagentError as exc:
        entry.error = str(exc)
    except Exception as exc:  # a tool's own bug is reported, not raised
        entry.error = f"{type(exc).__name__}: {exc}"
    return entry


@dataclass(frozen=True)
class _ToolCall:
    index: int
    tool: Tool
    args: dict[str, Any]
    assign_to: Any


@dataclass
class _Checked:
    """A batch checked before anything runs: what runs, in order (a vault action by
    its index in the batch, or a tool call), the vault actions validated, whether
    it writes, and every problem found (then nothing runs)."""

    order: list[int | _ToolCall] = field(default_factory=list)
    vault_items: list[Any] = field(default_factory=list)
    vault_actions: list[BaseAction] = field(default_factory=list)
    writes: bool = False
    problems: list[str] = field(default_factory=list)


def run_action_batch(
    raw: Sequence[Any], registry: ToolRegistry, memory: MemoryAccess
) -> BatchResult:
    """JSON mode: validate every action, then run them all or (on a failure) none:
    a failed batch rolls the vault back and undoes the tools that had written."""
    batch = _check_batch(raw, registry)
    if batch.problems:
        error = "nothing was run: " + "; ".join(batch.problems)
        return BatchResult(False, error=error, writes=batch.writes)
    memory.vault.begin()
    results, done_tools = _run_batch(batch, memory)
    bad = next((r for r in results if not r.ok), None)
    if bad is None:
        return BatchResult(True, results)
    restored = undo_writes(memory, done_tools)
    error = f"action {bad.index} ({bad.action}) failed: {bad.error}; the whole batch was undone"
    return BatchResult(False, results, error, batch.writes, restored)


def _check_batch(raw: Sequence[Any], registry: ToolRegistry) -> _Checked:
    out = _Checked()
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            out.problems.append(f'action {i} is not an object like {{"action": ...}}')
            continue
        name = item.get("action")
        if isinstance(name, str) and name in SPECS:
            out.vault_items.append(item)
            out.order.append(i)
            out.writes = out.writes or SPECS[name].changes
            continue
        call = _check_tool_call(i, item, registry)
        if isinstance(call, str):
            out.problems.append(call)
            continue
        out.writes = out.writes or call.tool.name in ("remember", "forget")
        out.order.append(call)
    if out.vault_items and not out.problems:
        try:
            out.vault_actions = validate_actions(out.vault_items)
        except ActionsInvalid as exc:
            mixed = len(out.vault_items) < len(raw)
            note = " (vault actions numbered among themselves)" if mixed else ""
            out.problems.append(str(exc) + note)
    return out


def _check_tool_call(i: int, item: JsonObject, registry: ToolRegistry) -> _ToolCall | str:
    """Action `i` as a call of a loaded tool with valid arguments, or what is wrong."""
    name = item.get("action")
    tool = registry.catalog.get(name) if isinstance(name, str) else None
    if tool is None:
        known = [*SPECS, *registry.loaded]
        return f"action {i}: unknown action {name!r}; valid: {', '.join(known)}"
    if not registry.is_loaded(tool.name):
        return (
            f"action {i}: tool {tool.name!r} is not loaded; first run "
            f'{{"action": "load_tools", "names": ["{tool.name}"]}}'
        )
    args = {k: v for k, v in item.items() if k not in ("action", "assign_to")}
    if any(isinstance(v, dict) and "$var" in v for v in args.values()):
        return f"action {i} ({tool.name}): $var works only in vault actions"
    try:
        tool.params.model_validate(args)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        return f"action {i} ({tool.name}): {where}: {first['msg']}; signature {tool.signature()}"
    return _ToolCall(i, tool, args, item.get("assign_to"))


def _run_batch(
    batch: _Checked, memory: MemoryAccess
) -> tuple[list[ActionOutcome], list[tuple[str, Any]]]:
    """Run a checked batch in order, each run of vault actions as one group; the
    results, and the tool calls that succeeded (to undo if another failed)."""
    results: list[ActionOutcome] = []
    done_tools: list[tuple[str, Any]] = []
    pending = iter(batch.vault_actions)
    group: list[int] = []  # the batch indexes of the vault actions in a row

    def run_group() -> None:
        actions = [next(pending) for _ in group]
        for index, done in zip(group, run_actions(memory.vault, actions).results, strict=True):
            done.index = index
            results.append(done)
        group.clear()

    for step in batch.order:
        if isinstance(step, int):
            group.append(step)
            continue
        if group:
            run_group()
        entry = _tool_result(step)
        if entry.ok:
            done_tools.append((entry.action, entry.value))
        results.append(entry)
    if group:
        run_group()
    return results, done_tools


class PythonRunJson(TypedDict):
    """`PythonRun.to_json`, what the model reads of a run."""

    output: str
    result: Any
    """Whatever JSON value the code's last expression held."""
    error: str | None
    final: bool
    rolled_back: NotRequired[list[str]]


@dataclass
class PythonRun:
    """What a Python-mode step's code did: its printed `output`, its `result` (as
    JSON holds it), its `error` (None when it ran through), whether it gave the
    `final` answer, and the files its failure `rolled_back`."""

    output: str
    result: Any
    error: str | None
    final: bool = False
    rolled_back: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, run: RunResult) -> PythonRun:
        out = run.to_json()
        return cls(out["output"], out["result"], out["error"], out["final"])

    def to_json(self) -> PythonRunJson:
        out: PythonRunJson = {
            "output": self.output,
            "result": self.result,
            "error": self.error,
            "final": self.final,
        }
        if self.rolled_back:
            out["rolled_back"] = self.rolled_back
        return out


class PythonMode:
    """Python mode: one sandbox session per conversation, on a pool worker.

    The session's variables persist between turns (saved in `state`, so with a
    shared database another server continues them); tools are gated by the
    registry (a tool not loaded is a NameError in the code) and every call that
    wrote is remembered so a failed run can be undone.
    """

    def __init__(self, home: MemoryHome, memory: MemoryAccess, registry: ToolRegistry) -> None:
        self.home = home
        self.memory = memory
        self.registry = registry
        self.session: Any = None  # an IsolatedSession once code has run
        self._done: list[tuple[str, Any]] = []

    def _open(self, conversation_id: str, resume: bool) -> Any:
        from memagent.sandbox import IsolatedSession, load_session

        if self.session is None:
            self.session = IsolatedSession(tools=self._tools())
            if resume:
                try:
                    state = self.memory.stores.state  # a shared database's, else state/ files
                    load_session(self.home, _name(conversation_id), self.session, state=state)
                except MemagentError:
                    self.session = IsolatedSession(tools=self._tools())
        return self.session

    def _tools(self) -> dict[str, Callable[..., Any]]:
        fns: dict[str, Callable[..., Any]] = dict(vault_tools(self.memory.vault))
        for tool in self.registry.catalog.values():
            fns[tool.name] = _gated(tool, self.registry, self._done)
        return fns

    def run(self, code: str, conversation_id: str, *, resume: bool) -> PythonRun:
        """Run `code` in the conversation's session (`resume`: load its saved
        variables first). A deadline that stops the code undoes its writes and is
        raised; any other failure is the result's `error`, its writes undone."""
        self._done.clear()
        session = self._open(conversation_id, resume)
        vault = self.memory.vault
        vault.begin()
        try:
            run = session.run(code)
        except DeadlineExceeded:
            undo_writes(self.memory, self._done)  # the budget killed the code mid-run
            raise
        except MemagentError as exc:
            return PythonRun("", None, str(exc))
        out = PythonRun.of(run)
        if run.error is not None:
            out.rolled_back = undo_writes(self.memory, self._done)
        return out

    def save(self, session: Any, conversation_id: str, notes: list[str]) -> None:
        """Persist the session's variables; a failure is a note, not an error."""
        from memagent.sandbox import save_session

        try:
            state = self.memory.stores.state
            save_session(self.home, _name(conversation_id), session, state=state)
        except MemagentError as exc:
            notes.append(f"sandbox state not saved: {exc}")

    def close(self) -> None:
        """Give the session's worker back to the pool (a new conversation starts fresh)."""
        if self.session is not None:
            self.session.close()
            self.session = None


def _name(conversation_id: str) -> str:
    return f"agent-{conversation_id}"


def _gated(tool: Tool, registry: ToolRegistry, done: list[tuple[str, Any]]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        if not registry.is_loaded(tool.name):
            raise NameError(
                f"tool {tool.name!r} is not loaded; call load_tools([{tool.name!r}]) first"
            )
        value = tool(*args, **kwargs)
        done.append((tool.name, value))
        return value

    call.__name__ = tool.name
    return call


def vault_function_cards() -> list[ToolCard]:
    """Signatures of the vault functions as sandboxed code sees them."""
    return list(_vault_cards())


@functools.cache
def _vault_cards() -> tuple[ToolCard, ...]:
    """The cards come from the declared actions, fixed once imported."""
    from memagent.memory.vault import Vault

    probe = cast(Vault, None)  # only the signatures are read; nothing is called
    return tuple(Tool.of(fn, name=name).card() for name, fn in vault_tools(probe).items())
