"""The agent loop: think → act → observe → reply, over one memory home.

One user turn:
1. Memory goes in context mechanically (`AgentMemory.context`): `user.md`, then
   hybrid recall over past exchanges, notes and profile facts, within a budget.
2. The model is asked for a step (one JSON object where a schema is used, else
   tagged text). Actions (JSON mode) or code (Python mode) run; their result goes
   back as a `<result>` message; the loop repeats until a reply or `max_steps`.
   Every `planning_interval` steps the model first writes a plan.
3. A step that is garbage, invalid JSON, names unknown actions, or repeats
   itself gets a precise error back and counts as a step. A batch whose action
   fails is rolled back whole. When no valid reply came within `max_steps`, the
   agent says honestly what went wrong — it never raises for model output.
4. After the reply, a background thread saves the conversation and the trace,
   stores the exchange as a chunk and runs the profile pipeline: memory writes
   never delay the reply (`flush()` waits for them).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from memagent.actions import (
    MODELS_BY_NAME,
    SPECS,
    ActionsInvalid,
    run_actions,
    validate_actions,
    vault_tools,
)
from memagent.agent.background import BackgroundWriter
from memagent.agent.commands import COMMANDS, Command, help_text, parse_command
from memagent.agent.conversations import Conversation, Conversations
from memagent.agent.learning import PendingLearning, PendingStatement
from memagent.agent.memory import (
    MAX_MESSAGE_CHARS,
    AgentMemory,
    MemoryContext,
    count_tokens,
    looks_like_request,
)
from memagent.agent.personas import Personas
from memagent.agent.prompts import PromptSet, load_prompt_set
from memagent.agent.protocol import MODES, StepInvalid, parse_step, reply_schema, step_schema
from memagent.agent.streaming import ReplyStreamer
from memagent.agent.tools import BUILTIN_TOOLS, Tool, ToolRegistry, plugin_tools
from memagent.agent.traces import Trace, Traces
from memagent.agent.voice import is_small_talk, not_in_memory, stable_prefix, to_user
from memagent.core import InvalidInput, MemagentError, MemoryHome
from memagent.core.deadline import check_deadline
from memagent.core.errors import DeadlineExceeded
from memagent.llm import LLM, Message, Usage

if TYPE_CHECKING:
    from memagent.memory.profile import ProfileStore
    from memagent.stores import Stores

FALLBACK_PERSONA = "You are a helpful assistant with a durable memory of the user."
TextCallback = Callable[[str], None]


@dataclass
class TurnResult:
    """What one user turn produced."""

    reply: str
    ok: bool
    """True when the model gave the reply; False for the agent's honest fallback."""
    conversation_id: str
    steps: int
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    memory_tokens: int = 0
    memory_sources: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "reply": self.reply,
            "ok": self.ok,
            "conversation_id": self.conversation_id,
            "steps": self.steps,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
            },
            "seconds": round(self.seconds, 3),
            "memory_tokens": self.memory_tokens,
            "memory_sources": self.memory_sources,
            "error": self.error,
        }


def check_message(message: object) -> str:
    if not isinstance(message, str):
        raise InvalidInput("the message must be text")
    if "\x00" in message:
        raise InvalidInput("the message contains a NUL character")
    if not message.strip():
        raise InvalidInput("the message is empty")
    if len(message) > MAX_MESSAGE_CHARS:
        raise InvalidInput(
            f"the message is {len(message)} characters; the limit is {MAX_MESSAGE_CHARS}"
        )
    return message.strip()


class Agent:
    """A memory assistant over one memory home and one model.

    `Agent("~/mem", model="embedded").run("What is my cat called?")` just works:
    `home` is a folder (created and initialised if missing; None: `$MEMAGENT_HOME`,
    else `~/.memagent`) or a `MemoryHome`, and the model is an `LLM` or a spec
    (`llm` or `model=`; default: the home's `llm.model`).

    Defaults come from the home's config (`[agent]`). `mode` is `json` or
    `python`; `retrieval=False` turns memory-in-context off (the benchmark's
    baseline); `structured=False` asks for tagged text instead of a JSON step.
    `conversation` resumes a saved conversation by id. `record=False` answers
    without writing anything (no exchange, conversation, trace or learning).
    Use as a context manager or call `close()` to flush the background writes.
    """

    def __init__(
        self,
        home: MemoryHome | str | os.PathLike[str] | None = None,
        llm: LLM | str | None = None,
        *,
        model: str | None = None,
        mode: str | None = None,
        persona: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        max_steps: int | None = None,
        planning_interval: int | None = None,
        retrieval: bool = True,
        learn_profile: bool | None = None,
        structured: bool = True,
        prompt_set: str | None = None,
        embeddings: bool | None = None,
        conversation: str | None = None,
        persist: bool = True,
        max_tokens: int | None = None,
        stores: Stores | None = None,
        record: bool = True,
    ) -> None:
        home = _open_home(home)
        self.home = home
        cfg = home.config.agent
        if llm is not None and model is not None:
            raise InvalidInput("give the model once: llm or model, not both")
        spec = model if model is not None else llm
        if spec is None or isinstance(spec, str):
            from memagent.llm import load_llm

            llm = load_llm(spec or home.config.llm.model, home.config.llm)
        else:
            llm = spec
        self.llm = llm
        self.record = record
        self.mode = mode or cfg.mode
        if self.mode not in MODES:
            raise InvalidInput(f"unknown mode {self.mode!r}: use json or python")
        self.max_steps = max_steps if max_steps is not None else cfg.max_steps
        if not isinstance(self.max_steps, int) or not 1 <= self.max_steps <= 50:
            raise InvalidInput("max_steps must be an integer in 1..50")
        self.planning_interval = (
            planning_interval if planning_interval is not None else cfg.planning_interval
        )
        if self.planning_interval is not None and self.planning_interval < 1:
            raise InvalidInput("planning_interval must be at least 1")
        self.retrieval = retrieval
        self.learn_profile = cfg.learn_profile if learn_profile is None else learn_profile
        self.structured = structured
        self.persist = persist
        self.max_tokens = max_tokens or home.config.llm.max_tokens
        self.temperature = home.config.llm.temperature
        if prompt_set is None:
            prompt_set = default_prompt_set(llm.name, self.mode)
        self.prompts: PromptSet = load_prompt_set(prompt_set)
        self.memory = AgentMemory(home, embeddings=embeddings, stores=stores)
        shared = self.memory.stores.db is not None  # choices live in the database then
        self.personas = Personas(home, self.memory.stores.state if shared else None)
        self.persona_name = persona
        if persona is not None:
            self.personas.load(persona)  # fail early on an unknown persona
        self.registry = ToolRegistry()
        for t in self.memory.tools():
            self.registry.add(t)
        self.registry.add(Tool.of(self._search_tools_fn(), name="search_tools", default=True))
        self.registry.add(Tool.of(self._load_tools_fn(), name="load_tools", default=True))
        for fn in BUILTIN_TOOLS:
            self.registry.add(fn)
        for plugin in plugin_tools():
            self.registry.add(plugin, replace=True)
        for extra in tools:
            self.registry.add(extra, replace=True)
        self.conversations = Conversations(home, self.memory.stores.state)
        self.traces = Traces(home, self.memory.stores.state)
        self.conversation: Conversation = (
            self.conversations.load(conversation) if conversation else self.conversations.new()
        )
        self._session: Any = None
        self._python_done: list[tuple[str, Any]] = []
        self._writer = BackgroundWriter()
        self._learner = BackgroundWriter("memagent-agent-learner")
        self.background_errors = self._writer.errors
        self._learner.errors = self._writer.errors
        self.learning_left = 0
        self._queued: set[str] = set()
        """Statements left unlearned by a bounded `close` (queued in the home)."""

    # -- lifecycle ------------------------------------------------------------------------
    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def flush(self) -> None:
        """Wait for the background memory writes of every turn so far."""
        self._writer.flush()
        self._learner.flush()

    def close(self, *, learn_wait: float | None = None) -> None:
        """Finish the background writes; wait at most `learn_wait` seconds (None:
        as long as it takes) for profile learning. Statements not learned by then
        stay queued in the home (`learning_left` says how many; see
        `memagent.agent.learning`)."""
        self._writer.flush()
        learned = self._learner.flush(timeout=learn_wait)
        if self._session is not None:  # its sandbox worker goes back to the pool
            self._session.close()
            self._session = None
        self._writer.close()
        if learned:
            self._learner.close()
        else:  # the model call in flight ends with the process; the queue is on disk
            self._learner.abandon()
            self.learning_left = len(self.pending_learning.pending())
        self.memory.close()

    @property
    def pending_learning(self) -> PendingLearning:
        return PendingLearning(self.memory.stores.state)

    def learn_pending(self) -> int:
        """Queue for learning the statements earlier sessions left unlearned (see
        `close`); returns how many. The chat does this when it ends, so they never
        hold up an answer."""
        if not (self.learn_profile and self.record):
            return 0
        self._writer.flush()  # this session's statements are queued by then
        items = [i for i in self.pending_learning.pending() if i.name not in self._queued]
        for item in items:
            self._learner.submit(f"learn {item.name}", self._learn_job(item))
        return len(items)

    def _learn_job(self, item: PendingStatement, trace: Trace | None = None) -> Callable[[], None]:
        self._queued.add(item.name)
        pending, store, llm = self.pending_learning, self.memory.stores.profile, self.llm

        def job() -> None:
            note = _learn(store, llm, item.message)
            pending.done(item)
            if trace is not None:
                trace.background.append(note)
                if self.persist:
                    self.traces.save(trace)

        return job

    @property
    def conversation_id(self) -> str:
        return self.conversation.id

    # -- tools ------------------------------------------------------------------------------
    def _search_tools_fn(self) -> Callable[..., Any]:
        registry = self.registry

        def search_tools(query: str) -> list[dict[str, Any]]:
            """Find more tools by what they do; load them with load_tools."""
            return registry.search(query)

        return search_tools

    def _load_tools_fn(self) -> Callable[..., Any]:
        registry = self.registry

        def load_tools(names: list[str]) -> dict[str, Any]:
            """Load tools by name (from search_tools); they are usable at once."""
            return registry.load(names)

        return load_tools

    def tool_cards(self) -> list[dict[str, Any]]:
        cards = [t.card() for t in self.registry.loaded_tools()]
        if self.mode == "python":
            cards = [*_vault_function_cards(), *cards]
        return cards

    # -- prompt --------------------------------------------------------------------------
    def persona_text(self) -> str:
        try:
            persona = self.personas.load(self.persona_name or self.personas.active_name())
            return self.personas.render(persona)
        except MemagentError:
            if self.persona_name is not None:
                raise
            return FALLBACK_PERSONA

    def schema(self) -> dict[str, Any]:
        if self.prompts.schema == "reply":
            return reply_schema()
        return step_schema(self.mode, self.registry.loaded_tools())

    def system_prompt(self) -> str:
        schema = self.schema()
        return self.prompts.render(
            "system",
            persona=self.persona_text(),
            tools=self.tool_cards(),
            vault_actions=", ".join(MODELS_BY_NAME),
            schema=json.dumps(schema, ensure_ascii=False),
        )

    def _history(self) -> list[Message]:
        turns = self.prompts.history_turns
        if turns is None:
            turns = self.home.config.agent.history_turns
        msgs = self.conversation.messages[-2 * turns :] if turns else []
        out = []
        for m in msgs:
            if m.role == "assistant":
                content = (
                    json.dumps({"reply": m.content}, ensure_ascii=False)
                    if self.structured
                    else f"<reply>{m.content}</reply>"
                )
            else:
                content = self.prompts.render("user_turn", memory="", message=m.content)
            out.append(Message.model_validate({"role": m.role, "content": content}))
        return out

    # -- one turn -------------------------------------------------------------------------
    def run(self, message: str) -> str:
        """The reply to `message` (one `turn`); `LLMError` when the model failed to
        give one, rather than the agent's apology as if it were an answer."""
        result = self.turn(message)
        if not result.ok:
            from memagent.llm import LLMError

            raise LLMError(result.error or result.reply)
        return result.reply

    def turn(self, message: str, *, on_text: TextCallback | None = None) -> TurnResult:
        """Answer one user message (see the module docstring). A chat command
        (`/help`, …) is answered here: no model call, nothing stored."""
        message = check_message(message)
        command = parse_command(message)
        if command is not None:
            answer = self.run_command(command)
            if on_text is not None:
                on_text(answer)
            return TurnResult(reply=answer, ok=True, conversation_id=self.conversation.id, steps=0)
        started = time.perf_counter()
        turn_no = self.conversation.turns + 1
        trace = Trace(self.conversation.id, turn_no, self.llm.name, self.mode, message)
        ctx = MemoryContext("", 0)
        if self.retrieval:
            cfg = self.home.config.agent
            try:
                ctx = self.memory.context(
                    message,
                    budget_tokens=cfg.context_tokens,
                    k=cfg.recall_k if self._recalls_for(message) else 0,
                    min_ratio=cfg.recall_min_ratio,
                )
            except MemagentError as exc:
                trace.memory["error"] = str(exc)
        trace.memory.update(tokens=ctx.tokens, sources=ctx.sources)
        if self.memory.chunks_error:
            trace.memory["chunks_unavailable"] = self.memory.chunks_error
        base = [
            Message(role="system", content=self.system_prompt()),
            *self.prompts.example_messages(structured=self.structured),
            *self._history(),
        ]
        work = [
            Message(
                role="user",
                content=self.prompts.render(
                    "user_turn",
                    memory=ctx.text,
                    message=message,
                    asking=self._recalls_for(message),
                    small_talk=is_small_talk(message),
                ),
            )
        ]
        # the memory-answer sets speak to the user: "my sister" copied from the
        # user's words becomes "your sister", also while it streams
        speaks = self.prompts.schema == "reply"
        shape = (lambda t: stable_prefix(t.lstrip(), message)) if speaks else None
        usage = Usage()
        reply: str | None = None
        if ctx.about_others and speaks:  # speaker attribution: not this person's life
            reply = not_in_memory(ctx.about_others)
            trace.memory["refused"] = "the lines that match are about someone else"
        last_error: str | None = None
        failed_write = False
        seen: set[str] = set()
        llm_failures = 0
        emitted = ""
        steps = 0
        for step_no in range(1, 0 if reply is not None else self.max_steps + 1):
            check_deadline("the agent turn")  # a request's budget stops the loop between steps
            steps = step_no
            if self._plans_at(step_no):
                self._plan(base, work, step_no, usage, trace)
            record: dict[str, Any] = {"step": step_no, "kind": "model"}
            trace.steps.append(record)
            t0 = time.perf_counter()
            streamer = ReplyStreamer(on_text, shape) if on_text is not None else None
            try:
                text = self._call(base + work, usage, streamer)
            except DeadlineExceeded:
                raise  # the request's budget stopped the model mid-reply: the turn ends
            except MemagentError as exc:
                llm_failures += 1
                last_error = f"the model failed: {exc}"
                record.update(error=last_error, seconds=round(time.perf_counter() - t0, 3))
                if llm_failures >= 2:
                    break
                continue
            llm_failures = 0
            if streamer is not None:
                emitted += streamer.emitted
            record.update(raw=text, seconds=round(time.perf_counter() - t0, 3))
            try:
                parsed = parse_step(text, self.mode, structured=self.structured)
                if text.strip() in seen:
                    raise StepInvalid(
                        "you repeated your previous response exactly; its result will not "
                        "change. Do something different, or give the reply now."
                    )
            except StepInvalid as exc:
                last_error = str(exc)
                record["error"] = last_error
                self._feed(work, text, {"error": last_error})
                continue
            record["parsed"] = parsed.to_json()
            if parsed.actions is not None:
                result = self._run_actions(parsed.actions)
                record["result"] = result
                if not result["ok"]:
                    last_error = result["error"]
                    failed_write = failed_write or result.get("writes", False)
                    self._feed(work, text, result)
                    continue
                failed_write = False
                seen.add(text.strip())
                if parsed.reply is not None:
                    reply = parsed.reply
                    break
                self._feed(work, text, result)
                continue
            if parsed.python is not None:
                run = self._run_python(parsed.python)
                record["result"] = run
                if run["error"] is None and run["final"]:
                    reply = _as_text(run["result"])
                    break
                if run["error"] is not None:
                    last_error = f"the code failed: {run['error']}"
                    failed_write = failed_write or bool(run.get("rolled_back"))
                else:
                    seen.add(text.strip())
                    if parsed.reply is not None:
                        reply = parsed.reply
                        break
                self._feed(work, text, run)
                continue
            reply = parsed.reply
            break
        ok = reply is not None
        if reply is None:
            reply = _honest_reply(last_error, failed_write, self.max_steps)
        elif speaks:
            reply = to_user(reply, message)
        if on_text is not None and emitted.strip() != reply.strip():
            if emitted and reply.startswith(emitted):  # the rest of a reply shown in part
                on_text(reply[len(emitted) :])
            else:
                on_text(("\n" if emitted else "") + reply)
        trace.reply, trace.ok = reply, ok
        trace.seconds = round(time.perf_counter() - started, 3)
        turn_result = TurnResult(
            reply=reply,
            ok=ok,
            conversation_id=self.conversation.id,
            steps=steps,
            usage=usage,
            seconds=time.perf_counter() - started,
            memory_tokens=ctx.tokens,
            memory_sources=ctx.sources,
            error=None if ok else last_error,
        )
        self._after_turn(message, reply, ok, trace)
        return turn_result

    def run_command(self, command: Command) -> str:
        """The answer to a chat command (see `memagent.agent.commands`)."""
        name, arg = command.name, command.arg
        if name == "help":
            return help_text()
        if name == "exit":
            return "Goodbye."
        if name == "new":
            self.flush()
            self.conversation = self.conversations.new()
            self._session = None
            return f"Started a new conversation ({self.conversation.id})."
        if name == "history":
            n = int(arg) if arg.isdigit() and 0 < int(arg) <= 200 else 10
            msgs = self.conversation.messages[-n:]
            if not msgs:
                return "Nothing said yet in this conversation."
            return "\n".join(
                f"{'you' if m.role == 'user' else 'assistant'}: {m.content}" for m in msgs
            )
        if name == "recall":
            if not arg:
                return "Usage: /recall QUERY"
            self.flush()  # earlier turns of this chat are stored in the background
            try:
                hits = self.memory.recall(arg, k=5)
            except MemagentError as exc:
                return f"Recall failed: {exc}"
            if not hits:
                return "Nothing in memory matches that."
            return "\n".join(
                f"{h['id']}  {' '.join(str(h['content']).split())[:120]}" for h in hits
            )
        if name == "forget":
            if not arg:
                return "Usage: /forget ID (ids come from /recall)"
            self.flush()
            try:
                self.memory.forget(arg)
            except MemagentError as exc:
                return f"Could not forget {arg}: {exc}"
            return f"Forgot {arg} (memagent chunks restore {arg} brings it back)."
        known = ", ".join(f"/{c}" for c in COMMANDS)
        return f"Unknown command /{name}. Commands: {known} (/help explains them)."

    def _recalls_for(self, message: str) -> bool:
        return self.prompts.recall_for == "all" or looks_like_request(message)

    # -- steps -------------------------------------------------------------------------------
    def _plans_at(self, step_no: int) -> bool:
        n = self.planning_interval
        return n is not None and "planning" in self.prompts.templates and (step_no - 1) % n == 0

    def _plan(
        self, base: list[Message], work: list[Message], step_no: int, usage: Usage, trace: Trace
    ) -> None:
        ask = Message(role="user", content=self.prompts.render("planning", step=step_no))
        record: dict[str, Any] = {"step": step_no, "kind": "planning"}
        trace.steps.append(record)
        schema = {
            "type": "object",
            "properties": {"think": {"type": "string", "minLength": 1, "maxLength": 1500}},
            "required": ["think"],
            "additionalProperties": False,
        }
        try:
            res = self.llm.chat(
                [*base, *work, ask],
                response_schema=schema if self.structured else None,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
            )
        except MemagentError as exc:
            record["error"] = f"the model failed: {exc}"
            return
        _add_usage(usage, res.usage)
        plan = res.text.strip()
        try:
            obj = json.loads(plan)
            if isinstance(obj, dict) and isinstance(obj.get("think"), str):
                plan = obj["think"].strip()
        except json.JSONDecodeError:
            pass
        record["plan"] = plan
        if plan:
            work.append(ask)
            work.append(
                Message(
                    role="assistant",
                    content=json.dumps({"think": plan}, ensure_ascii=False)
                    if self.structured
                    else f"<think>{plan}</think>",
                )
            )

    def _call(self, messages: list[Message], usage: Usage, streamer: ReplyStreamer | None) -> str:
        schema = self.schema() if self.structured else None
        if streamer is None:
            res = self.llm.chat(
                messages,
                response_schema=schema,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
            )
            _add_usage(usage, res.usage)
            return res.text
        pieces: list[str] = []
        for piece in self.llm.stream(
            messages,
            response_schema=schema,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        ):
            pieces.append(piece)
            streamer.feed(piece)
        text = "".join(pieces)
        usage.prompt_tokens += sum(count_tokens(m.content) for m in messages)
        usage.completion_tokens += count_tokens(text)
        return text

    def _feed(self, work: list[Message], text: str, result: dict[str, Any]) -> None:
        work.append(Message(role="assistant", content=text.strip() or "(empty)"))
        payload = json.dumps(result, ensure_ascii=False, default=str)
        if len(payload) > 8000:
            payload = payload[:8000] + "… [cut]"
        work.append(Message(role="user", content=self.prompts.render("result", result=payload)))

    # -- JSON mode: actions ---------------------------------------------------------------
    def _run_actions(self, raw: Sequence[Any]) -> dict[str, Any]:
        """Validate every action, then run them all or (on a failure) none."""
        problems: list[str] = []
        plan: list[tuple[str, Any]] = []
        vault_dicts: list[dict[str, Any]] = []
        writes = False
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                problems.append(f'action {i} is not an object like {{"action": ...}}')
                continue
            name = item.get("action")
            if isinstance(name, str) and name in MODELS_BY_NAME:
                vault_dicts.append(item)
                plan.append(("vault", i))
                writes = writes or bool(SPECS[name].writes)
                continue
            tool = self.registry.catalog.get(name) if isinstance(name, str) else None
            if tool is None:
                known = [*MODELS_BY_NAME, *self.registry.loaded]
                problems.append(f"action {i}: unknown action {name!r}; valid: {', '.join(known)}")
                continue
            if not self.registry.is_loaded(tool.name):
                problems.append(
                    f"action {i}: tool {tool.name!r} is not loaded; first run "
                    f'{{"action": "load_tools", "names": ["{tool.name}"]}}'
                )
                continue
            args = {k: v for k, v in item.items() if k not in ("action", "assign_to")}
            if any(isinstance(v, dict) and "$var" in v for v in args.values()):
                problems.append(f"action {i} ({tool.name}): $var works only in vault actions")
                continue
            try:
                tool.params.model_validate(args)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "arguments"
                problems.append(
                    f"action {i} ({tool.name}): {where}: {first['msg']}; "
                    f"signature {tool.signature()}"
                )
                continue
            writes = writes or tool.name in ("remember", "forget")
            plan.append(("tool", (i, tool, args, item.get("assign_to"))))
        if vault_dicts and not problems:
            try:
                vault_actions = validate_actions(vault_dicts)
            except ActionsInvalid as exc:
                note = (
                    " (vault actions numbered among themselves)"
                    if len(vault_dicts) < len(raw)
                    else ""
                )
                problems.append(str(exc) + note)
        if problems:
            return {
                "ok": False,
                "applied": False,
                "error": "nothing was run: " + "; ".join(problems),
                "writes": writes,
            }
        vault = self.memory.vault
        vault.begin()
        results: list[dict[str, Any]] = []
        done_tools: list[tuple[str, Any]] = []
        vi = 0
        k = 0
        while k < len(plan):
            kind, payload = plan[k]
            if kind == "vault":
                group_idx = []
                while k < len(plan) and plan[k][0] == "vault":
                    group_idx.append(plan[k][1])
                    k += 1
                group = vault_actions[vi : vi + len(group_idx)]
                vi += len(group_idx)
                out = run_actions(vault, group)
                for orig, done in zip(group_idx, out["results"], strict=True):
                    done["index"] = orig
                    results.append(done)
                continue
            i, tool, args, assign_to = payload
            entry: dict[str, Any] = {"index": i, "action": tool.name}
            if assign_to:
                entry["assign_to"] = assign_to
            try:
                value = tool.call(args)
                entry.update(ok=True, value=value)
                done_tools.append((tool.name, value))
            except MemagentError as exc:
                entry.update(ok=False, error=str(exc))
            except Exception as exc:  # a tool's own bug is reported, not raised
                entry.update(ok=False, error=f"{type(exc).__name__}: {exc}")
            results.append(entry)
            k += 1
        failed: list[dict[str, Any]] = [r for r in results if not r["ok"]]
        if not failed:
            return {"ok": True, "results": results}
        restored = vault.rollback()
        for name, value in reversed(done_tools):
            self.memory.undo_tool(name, value)
        bad = failed[0]
        return {
            "ok": False,
            "applied": False,
            "rolled_back": restored,
            "error": (
                f"action {bad['index']} ({bad['action']}) failed: {bad['error']}; "
                "the whole batch was undone"
            ),
            "results": results,
            "writes": writes,
        }

    # -- Python mode --------------------------------------------------------------------------
    def _sandbox(self) -> Any:
        if self._session is None:
            from memagent.sandbox import IsolatedSession, load_session

            self._session = IsolatedSession(tools=self._sandbox_tools())
            if self.persist and self.conversation.messages:
                try:
                    state = self.memory.stores.state  # a shared database's, else state/ files
                    load_session(self.home, self._session_name(), self._session, state=state)
                except MemagentError:
                    self._session = IsolatedSession(tools=self._sandbox_tools())
        return self._session

    def _session_name(self) -> str:
        return f"agent-{self.conversation.id}"

    def _sandbox_tools(self) -> dict[str, Callable[..., Any]]:
        fns: dict[str, Callable[..., Any]] = dict(vault_tools(self.memory.vault))
        done = self._python_done
        for tool in self.registry.catalog.values():
            fns[tool.name] = _gated(tool, self.registry, done)
        return fns

    def _run_python(self, code: str) -> dict[str, Any]:
        self._python_done.clear()
        session = self._sandbox()
        vault = self.memory.vault
        vault.begin()
        try:
            run = session.run(code)
        except DeadlineExceeded:
            # the request's budget killed the code mid-run: undo what it had written
            vault.rollback()
            for name, value in reversed(self._python_done):
                self.memory.undo_tool(name, value)
            raise
        except MemagentError as exc:
            return {"output": "", "result": None, "error": str(exc), "final": False}
        out = run.to_json()
        if run.error is not None:
            restored = vault.rollback()
            for name, value in reversed(self._python_done):
                self.memory.undo_tool(name, value)
            if restored:
                out["rolled_back"] = restored
        return out

    # -- after the reply ------------------------------------------------------------------
    def _after_turn(self, message: str, reply: str, ok: bool, trace: Trace) -> None:
        if not self.record:
            return
        conv = self.conversation
        persist = self.persist
        session = self._session if self.mode == "python" else None
        memory = self.memory
        learn = (
            self.learn_profile
            and ok
            and not looks_like_request(message)
            and not is_small_talk(message)
        )
        turn_no = trace.turn

        def job() -> None:
            notes = trace.background
            if persist:
                if not shared:
                    self.conversations.save(snapshot)
                if session is not None and not shared:
                    self._save_sandbox(session, notes)
            try:
                # an honest fallback is not worth remembering; what the user said is
                stored_reply = reply if ok else ""
                ids = memory.store_exchange(conv.id, message, stored_reply, turn=turn_no)
                notes.append(f"stored exchange as {ids}" if ids else "no chunk store")
            except MemagentError as exc:
                notes.append(f"exchange not stored: {exc}")
            if learn:  # slow (LLM calls): its own thread, so exchanges are stored at once
                try:  # queued on disk first: an exit before it is learned loses nothing
                    item = self.pending_learning.add(message, conv.id, turn_no)
                except MemagentError as exc:
                    notes.append(f"profile: not queued for learning: {exc}")
                else:
                    self._learner.submit(f"learn {turn_no}", self._learn_job(item, trace))
                    return
            if persist:
                self.traces.save(trace)

        # the next turn sees this exchange at once; the file is written in the background
        Conversations.add_exchange(conv, message, reply)
        snapshot = conv.model_copy(deep=True)
        # In a shared database another server may take the next turn: the
        # conversation is saved before the reply (one row), the rest after it.
        shared = persist and memory.stores.db is not None
        if shared:
            self.conversations.save(snapshot)
            if session is not None:  # and the Python session's variables with it
                self._save_sandbox(session, trace.background)
        self._writer.submit(f"turn {turn_no}", job)

    def _save_sandbox(self, session: Any, notes: list[str]) -> None:
        from memagent.sandbox import save_session

        try:
            state = self.memory.stores.state
            save_session(self.home, self._session_name(), session, state=state)
        except MemagentError as exc:
            notes.append(f"sandbox state not saved: {exc}")


def _open_home(home: MemoryHome | str | os.PathLike[str] | None) -> MemoryHome:
    if isinstance(home, MemoryHome):
        return home.require()
    if home is not None and not isinstance(home, str | os.PathLike):
        raise InvalidInput(f"home must be a folder path or a MemoryHome, not {type(home).__name__}")
    mh = MemoryHome.open(home)
    if not mh.exists:
        from memagent.setup import init_home

        mh.check_folder()
        init_home(mh)
    return mh.require()


def default_prompt_set(model_name: str, mode: str) -> str:
    """`instruct` for the embedded instruct model, `small` for the tiny base model
    (both in JSON mode: reply only), else the mode's full set."""
    if mode == "json" and model_name == "embedded":
        return "instruct"
    if mode == "json" and model_name.startswith("embedded:"):
        return "small"
    return mode


def _learn(store: ProfileStore, llm: LLM, message: str) -> str:
    from memagent.memory.profile import LearnFailed, learn

    if not store.names():
        return "profile: no resources"
    try:
        res = learn(store, llm, message)
    except LearnFailed as exc:
        return f"profile: {exc}"
    except MemagentError as exc:
        return f"profile: {exc}"
    return f"profile: {len(res.facts)} facts, {len(res.operations)} operations"


def _add_usage(total: Usage, part: Usage) -> None:
    total.prompt_tokens += part.prompt_tokens
    total.completion_tokens += part.completion_tokens


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _honest_reply(error: str | None, failed_write: bool, max_steps: int) -> str:
    why = (error or "no valid response").strip()
    if len(why) > 400:
        why = why[:400] + "…"
    if failed_write:
        return f"I couldn't save that because {why}"
    if error and error.startswith("the model failed"):
        return f"I couldn't answer: {why}"
    return f"I couldn't finish that within {max_steps} steps: {why}"


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


def _vault_function_cards() -> list[dict[str, Any]]:
    """Signatures of the vault functions as sandboxed code sees them."""
    from memagent.memory.vault import Vault

    probe = cast(Vault, None)  # only the signatures are read; nothing is called
    return [Tool.of(fn, name=name).card() for name, fn in vault_tools(probe).items()]
