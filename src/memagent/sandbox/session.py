"""`Session`: a stateful sandboxed interpreter with injected tools.

    session = Session(tools={"read_file": read_file})
    r = session.run("x = 2\\nprint(x)\\nx * 21")
    r.output == "2\\n"; r.result == 42; r.error is None

Variables, functions, classes and imports persist from one `run` to the next.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memagent.core.errors import InvalidInput
from memagent.sandbox._interp import Interpreter, host_recursion_guard
from memagent.sandbox._modules import ALLOWED_MODULES, load_module
from memagent.sandbox.limits import FinalAnswer, Limits, SandboxAbort

_MAX_ERROR_CHARS = 2000


@dataclass
class RunResult:
    """What one run produced. `error` is None, or `"Type: message (line N)"`."""

    output: str
    result: Any
    error: str | None
    final: bool = False
    """True when the run ended through `final_answer`/`FINAL`/`FINAL_VAR`."""
    operations: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict: `result` as itself when JSON can hold it, else its repr."""
        return {
            "output": self.output,
            "result": jsonable(self.result),
            "error": self.error,
            "final": self.final,
        }


def jsonable(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if value.bit_length() < 53 * 20:
            return value
        try:
            return str(value)
        except ValueError:  # past the int-to-str digit limit
            return f"<int of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if depth < 50 and isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    if depth < 50 and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: jsonable(v, depth + 1) for k, v in value.items()}
    try:
        text = repr(value)
    except Exception:  # a hostile repr must not break the report
        text = f"<{type(value).__name__}>"
    return text[:100_000]


class SessionLike(Protocol):
    """What persistence and the call sites need of a session, in this process
    (`Session`) or in a worker process (`memagent.sandbox.pool.IsolatedSession`)."""

    def run(self, code: str, *, replay: Sequence[str] = ()) -> RunResult: ...

    def restore_variables(self, values: dict[str, Any]) -> None: ...

    def snapshot(self) -> tuple[dict[str, Any], list[str]]: ...

    def close(self) -> None: ...


class Session:
    """A restricted, stateful Python interpreter.

    `tools` maps names to plain host callables; the code calls them like
    functions but can neither rebind them nor reach their internals.
    `final_answer(x)`, `FINAL(x)` and `FINAL_VAR("name")` end a run with an
    answer. Model code is never compiled to CPython bytecode: the interpreter
    compiles its AST into closures that make every check and enforce `limits`
    on every step.
    """

    allowed_modules = ALLOWED_MODULES

    def __init__(
        self,
        tools: dict[str, Callable[..., Any]] | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.limits = limits or Limits()
        try:
            self._interp = Interpreter(self.limits, dict(tools or {}), load_module)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from exc

    def add_tools(self, tools: dict[str, Callable[..., Any]]) -> None:
        """Inject more tools into a live session (e.g. after `load_tools`).
        Refuses names that are taken, private, or not identifiers."""
        for name, fn in tools.items():
            try:
                self._interp.add_tool(name, fn)
            except ValueError as exc:
                raise InvalidInput(str(exc)) from exc

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._interp.protected - {"final_answer", "FINAL", "FINAL_VAR"})

    @property
    def variables(self) -> dict[str, Any]:
        """The session's global namespace (live; read it, don't rely on writing it)."""
        return self._interp.globals

    @property
    def definitions(self) -> list[tuple[str, str]]:
        """Source of the top-level `def`/`class`/`import` statements run so far,
        keyed by the names they bind, oldest first (the latest per name)."""
        return list(self._interp.definitions)

    def snapshot(self) -> tuple[dict[str, Any], list[str]]:
        """The JSON document of this session's state (what `save_session` writes)
        and the names of the variables it could not keep."""
        from memagent.sandbox._codec import snapshot

        return snapshot(self)

    def close(self) -> None:
        """Nothing to release in-process (the isolated session's counterpart)."""

    def restore_variables(self, values: dict[str, Any]) -> None:
        """Set global variables (used when loading a saved session). Names that
        are tools, dunders or not identifiers are refused."""
        for name, value in values.items():
            if not name.isidentifier():
                raise InvalidInput(f"invalid variable name {name!r}")
            try:
                self._interp.check_bind(name)
            except SandboxAbort as exc:
                raise InvalidInput(exc.message) from exc
            self._interp.globals[name] = value

    def run(self, code: str, *, replay: Sequence[str] = ()) -> RunResult:
        """Run `code` in this session. Errors in the code are reported in the
        result; only malformed input (not text, too large) raises `InvalidInput`.

        `replay` (definitions from a saved session) runs first, under the same
        single budget as `code`: a state file cannot buy itself more time,
        operations or memory than the run that loads it. A definition that fails
        to replay is a note; one that exhausts the budget ends the run."""
        if not isinstance(code, str):
            raise InvalidInput("sandbox code must be text")
        sources = [*replay, code]
        if any(not isinstance(src, str) for src in sources):
            raise InvalidInput("sandbox code must be text")
        size = sum(len(src.encode("utf-8", "surrogatepass")) for src in sources)
        if size > self.limits.max_source_bytes:
            raise InvalidInput(f"sandbox code is larger than {self.limits.max_source_bytes} bytes")
        interp = self._interp
        interp.start_run(code)
        notes: list[str] = []
        old_limit = host_recursion_guard(self.limits)
        try:
            for src in replay:
                interp.set_source(src)
                _, error, _ = self._execute(src)
                if error is not None and error.startswith(("LimitExceeded", "SecurityError")):
                    return RunResult("", None, f"{error} (replaying the session's definitions)")
                if error is not None:
                    notes.append(f"could not restore a definition: {error}")
            if replay:
                interp.output, interp.output_len, interp.output_truncated = [], 0, False
                interp.set_source(code)
            result, error, final = self._execute(code)
        finally:
            sys.setrecursionlimit(old_limit)
        output = "".join(interp.output)
        if interp.output_truncated:
            note = f"[output truncated at {self.limits.max_output_chars} characters]"
            output += "\n" + note
            notes.append(note)
        return RunResult(output, result, error, final, interp.ops, notes)

    def _execute(self, code: str) -> tuple[Any, str | None, bool]:
        interp = self._interp
        result: Any = None
        error: str | None = None
        final = False
        try:
            compiled = interp.compile_module(code)
        except SyntaxError as exc:
            return None, f"SyntaxError: {exc.msg} (line {exc.lineno})", False
        except (ValueError, RecursionError, MemoryError) as exc:
            return None, f"SyntaxError: {type(exc).__name__}: {exc} (line 1)", False
        try:
            try:
                result = interp.exec_module(compiled)
            except FinalAnswer as fa:
                result, final = fa.value, True
            if result is not None:
                interp.text_budget(result)  # the caller will render it: keep it bounded
        except SandboxAbort as exc:
            result, final = None, False
            error = _fmt(exc.kind, exc.message, exc.line or interp.line)
        except Exception as exc:
            result, final = None, False
            line = getattr(exc, "_sandbox_line", None) or interp.line
            try:
                message = str(exc)
            except Exception:
                message = "<unprintable>"
            kind = type(exc).__name__
            if isinstance(exc, RecursionError):  # C stopped at Python's recursion limit
                kind = "LimitExceeded"
                message = f"data nested too deep: {message}"
            if isinstance(exc, ValueError) and "integer string conversion" in message:
                kind = "LimitExceeded"  # CPython's hint (set_int_max_str_digits) is not ours
                message = (
                    f"an integer of more than {sys.get_int_max_str_digits()} digits "
                    "cannot be turned into text"
                )
            error = _fmt(kind, message, line)
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                raise
            error = _fmt(
                "SyntaxError", f"'{_control_name(exc)}' outside function or loop", interp.line
            )
        return result, error, final


def _control_name(exc: BaseException) -> str:
    return {"_Break": "break", "_Continue": "continue", "_Return": "return"}.get(
        type(exc).__name__, type(exc).__name__
    )


def _fmt(kind: str, message: str, line: int | None) -> str:
    if len(message) > _MAX_ERROR_CHARS:
        message = message[:_MAX_ERROR_CHARS] + "…"
    message = message.replace("\n", " ")
    text = f"{kind}: {message}" if message else kind
    return f"{text} (line {line})" if line else text


__all__ = ["RunResult", "Session", "SessionLike"]
