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
4. Before the reply is final, the exchange is stored as a chunk (durable: the
   next turn's recall sees it, also on a loaded machine, and "Noted" is true when
   said). After it, a background thread saves the conversation and the trace and
   runs the profile pipeline, which never delays a reply (`flush()` waits for
   them); recall never waits for profile learning.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from memagent.actions import (
    MODELS_BY_NAME,
)
from memagent.agent.acting import PythonMode, run_action_batch, vault_function_cards
from memagent.agent.answers import resolve_copied_dates
from memagent.agent.background import BackgroundWriter
from memagent.agent.commands import Command, answer_command, parse_command
from memagent.agent.conversations import Conversation, ConversationMessage, Conversations
from memagent.agent.honesty import check_question, check_reply
from memagent.agent.learning import (
    EXIT_LEARN_WAIT_S,
    PendingLearning,
    PendingStatement,
    left_note,
)
from memagent.agent.memory import (
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
from memagent.agent.turn import (
    FALLBACK_PERSONA,
    TextCallback,
    TurnResult,
    add_estimated_usage,
    add_usage,
    as_text,
    check_message,
    default_prompt_set,
    honest_reply,
    learn_note,
    open_home,
    write_plan,
)
from memagent.agent.voice import is_small_talk, stable_prefix, to_user
from memagent.core import InvalidInput, MemagentError, MemoryHome
from memagent.core.deadline import check_deadline
from memagent.core.errors import DeadlineExceeded
from memagent.index.temporal import day_words, parse_as_of
from memagent.llm import LLM, Message, Usage

if TYPE_CHECKING:
    from memagent.stores import Stores


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
        home = open_home(home)
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
        self.python = PythonMode(home, self.memory, self.registry, persist)
        self._writer = BackgroundWriter()
        self._learner = BackgroundWriter("memagent-agent-learner")
        self.background_errors = self._writer.errors
        self._learner.errors = self._writer.errors
        self.learning_left = 0
        """Statements left unlearned by a bounded `close` (queued in the home)."""
        self._queued: set[str] = set()
        if self.learn_profile and self.record:  # what earlier sessions left: now, on its worker
            self.learn_pending()

    # -- lifecycle ------------------------------------------------------------------------
    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(learn_wait=EXIT_LEARN_WAIT_S)
        if self.learning_left:
            print(left_note(self.learning_left), file=sys.stderr, flush=True)

    def flush(self) -> None:
        """Wait for the background memory writes of every turn so far (what recall
        reads). Profile learning has its own worker and is not waited for here:
        `flush_learning`."""
        self._writer.flush()

    def flush_learning(self, timeout: float | None = None) -> bool:
        """Wait at most `timeout` seconds (None: as long as it takes) for profile
        learning of every turn so far; True when none is left."""
        self._writer.flush()
        return self._learner.flush(timeout=timeout)

    def close(self, *, learn_wait: float | None = None) -> None:
        """Finish the background writes; wait at most `learn_wait` seconds (None:
        as long as it takes) for profile learning. Statements not learned by then
        stay queued in the home (`learning_left` says how many; see
        `memagent.agent.learning`)."""
        self._writer.flush()
        learned = self._learner.flush(timeout=learn_wait)
        self.python.close()  # its sandbox worker goes back to the pool
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
        `close`); returns how many. An agent does this when it starts (on the
        learning worker, so they never hold up an answer); calling it again picks
        up only what is new."""
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
            note = learn_note(store, llm, item.message)
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
            cards = [*vault_function_cards(), *cards]
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
    def run(self, message: str, *, as_of: datetime | date | str | None = None) -> str:
        """The reply to `message` (one `turn`); `LLMError` when the model failed to
        give one, rather than the agent's apology as if it were an answer."""
        result = self.turn(message, as_of=as_of)
        if not result.ok:
            from memagent.llm import LLMError

            raise LLMError(result.error or result.reply)
        return result.reply

    def turn(
        self,
        message: str,
        *,
        on_text: TextCallback | None = None,
        as_of: datetime | date | str | None = None,
    ) -> TurnResult:
        """Answer one user message (see the module docstring). A chat command
        (`/help`, …) is answered here: no model call, nothing stored.

        `as_of` (a datetime, a date, or ISO 8601 text; `InvalidInput` when
        malformed): when the question is asked. It is "now" for relative times in
        it ("last week"), for recall's time signals (recency, time ranges) and for
        the answer's prompt (which then says the date); None: the clock."""
        message = check_message(message)
        asked = parse_as_of(as_of) if as_of is not None else None
        now = asked.timestamp() if asked is not None else None
        today = day_words(asked) if asked is not None else None
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
                    now=now,
                )
            except MemagentError as exc:
                trace.memory["error"] = str(exc)
        trace.memory.update(tokens=ctx.tokens, sources=ctx.sources)
        if asked is not None:
            trace.memory["as_of"] = asked.isoformat()
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
                    today=today,
                ),
            )
        ]

        # every reply speaks to the user: "my sister" copied from the user's words
        # becomes "your sister", also while it streams, in every mode
        def shape(text: str) -> str:
            return stable_prefix(text.lstrip(), message)

        usage = Usage()
        asking = self.retrieval and looks_like_request(message) and not is_small_talk(message)
        checked = check_question(llm=self.llm, prompts=self.prompts, memory=self.memory,
            cfg=self.home.config.agent, base=base, turn=work[0].content, message=message,
            ctx=ctx, asking=asking, usage=usage, trace=trace, now=now, today=today)  # fmt: skip
        reply: str | None = checked.reply
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
                write_plan(self.llm, self.prompts, base, work, step_no, usage, trace,
                           structured=self.structured, max_tokens=self.max_tokens,
                           temperature=self.temperature)  # fmt: skip
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
                result = run_action_batch(parsed.actions, self.registry, self.memory)
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
                run = self.python.run(
                    parsed.python, self.conversation.id, resume=bool(self.conversation.messages)
                )
                record["result"] = run
                if run["error"] is None and run["final"]:
                    reply = as_text(run["result"])
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
            reply = honest_reply(last_error, failed_write, self.max_steps)
        else:
            reply = resolve_copied_dates(to_user(reply, message), message, ctx.text)
            reply = check_reply(checked, reply, message=message, ctx=ctx, prompts=self.prompts,
                                trace=trace, streamed=bool(emitted))  # fmt: skip
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
            p_grounded=trace.memory.get("verify", {}).get("p_yes"),
            refused_by=checked.refused_by,
            check_tokens=checked.tokens,
            check_seconds=checked.seconds,
        )
        self._after_turn(message, reply, ok, trace)
        return turn_result

    def run_command(self, command: Command) -> str:
        """The answer to a chat command (see `memagent.agent.commands`)."""
        return answer_command(command, self)

    def new_conversation(self) -> str:
        """Start a new conversation (the Python session's variables go with the old one)."""
        self.flush()
        self.conversation = self.conversations.new()
        self.python.close()
        return self.conversation.id

    def recent_messages(self, n: int) -> list[ConversationMessage]:
        return self.conversation.messages[-n:]

    def _recalls_for(self, message: str) -> bool:
        return self.prompts.recall_for == "all" or looks_like_request(message)

    # -- steps -------------------------------------------------------------------------------
    def _plans_at(self, step_no: int) -> bool:
        n = self.planning_interval
        return n is not None and "planning" in self.prompts.templates and (step_no - 1) % n == 0

    def _call(self, messages: list[Message], usage: Usage, streamer: ReplyStreamer | None) -> str:
        schema = self.schema() if self.structured else None
        if streamer is None:
            res = self.llm.chat(
                messages,
                response_schema=schema,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
            )
            add_usage(usage, res.usage)
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
        add_estimated_usage(usage, messages, count_tokens(text))
        return text

    def _feed(self, work: list[Message], text: str, result: dict[str, Any]) -> None:
        work.append(Message(role="assistant", content=text.strip() or "(empty)"))
        payload = json.dumps(result, ensure_ascii=False, default=str)
        if len(payload) > 8000:
            payload = payload[:8000] + "… [cut]"
        work.append(Message(role="user", content=self.prompts.render("result", result=payload)))

    # -- after the reply ------------------------------------------------------------------
    def _after_turn(self, message: str, reply: str, ok: bool, trace: Trace) -> None:
        if not self.record:
            return
        conv = self.conversation
        persist = self.persist
        session = self.python.session if self.mode == "python" else None
        memory = self.memory
        # a question may carry a fact ("I'm vegan, any recipe?"): the learner's
        # screen drops what cannot be one without a model call
        learn = self.learn_profile and ok and not is_small_talk(message)
        turn_no = trace.turn

        def job() -> None:
            notes = trace.background
            if persist:
                if not shared:
                    self.conversations.save(snapshot)
                if session is not None and not shared:
                    self.python.save(session, conv.id, notes)
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

        # Read your writes: the exchange's chunk is durable before the reply is final
        # (so "Noted" is true, and the next turn's recall, in this process or another
        # server's, finds it); only the conversation file, the trace and profile
        # learning are left to the background.
        try:
            # an honest fallback is not worth remembering; what the user said is
            ids = memory.store_exchange(conv.id, message, reply if ok else "", turn=turn_no)
            trace.background.append(f"stored exchange as {ids}" if ids else "no chunk store")
        except MemagentError as exc:
            trace.background.append(f"exchange not stored: {exc}")
        # the next turn sees this exchange at once; the file is written in the background
        Conversations.add_exchange(conv, message, reply)
        snapshot = conv.model_copy(deep=True)
        # In a shared database another server may take the next turn: the
        # conversation is saved before the reply (one row), the rest after it.
        shared = persist and memory.stores.db is not None
        if shared:
            self.conversations.save(snapshot)
            if session is not None:  # and the Python session's variables with it
                self.python.save(session, conv.id, trace.background)
        self._writer.submit(f"turn {turn_no}", job)
