"""The agent loop: think → act → observe → reply, over one memory home.

One user turn is three steps, each a method of `Agent` that runs (and is tested)
on its own, with what passes between them in `memagent.agent.steps`:

1. `prepare`: the message is read once (`QueryFacts`); memory goes in context
   mechanically (`MemoryAccess.context`: `user.md`, then hybrid recall over past
   exchanges, notes and profile facts within a budget, speaker attribution); the
   prompt is built; the honesty checks run (`check_question`), and a refusal
   there is the reply.
2. `act`: the model is asked for a step (one JSON object where a schema is used,
   else tagged text). Actions (JSON mode) or code (Python mode) run; their result
   goes back as a `<result>` message; this repeats until a reply or `max_steps`.
   Every `planning_interval` steps the model first writes a plan. A step that is
   garbage, invalid JSON, names unknown actions, or repeats itself gets a precise
   error back and counts as a step. A batch whose action fails is rolled back
   whole. Two model failures in a row end the steps.
3. `finish`: the reply speaks to the user, or, when no valid reply came, says
   honestly what went wrong (the agent never raises for model output). Before
   the reply is final, the exchange is stored as a chunk (durable: the next
   turn's recall sees it, also on a loaded machine, and "Noted" is true when
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
from typing import TYPE_CHECKING, Any, Unpack

from memagent.actions import SPECS
from memagent.agent.acting import (
    BatchResult,
    PythonMode,
    PythonRun,
    run_action_batch,
    vault_function_cards,
)
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
from memagent.agent.memory import MemoryAccess, MemoryContext
from memagent.agent.model_call import ask_for_step, feed_result
from memagent.agent.personas import Personas
from memagent.agent.prompts import PromptSet, load_prompt_set
from memagent.agent.protocol import StepInvalid, parse_step, reply_schema, step_schema
from memagent.agent.steps import Acted, PreparedTurn
from memagent.agent.streaming import ReplyStreamer
from memagent.agent.tools import Tool, ToolCard, agent_registry
from memagent.agent.traces import StepRecord, Trace, Traces
from memagent.agent.turn import (
    FALLBACK_PERSONA,
    AgentOverrides,
    TextCallback,
    TurnResult,
    agent_config,
    as_text,
    check_message,
    default_prompt_set,
    honest_reply,
    learn_note,
    open_model,
    open_or_create_home,
    write_plan,
)
from memagent.agent.voice import to_user
from memagent.core import MemagentError, MemoryHome
from memagent.core.config import AgentConfig
from memagent.core.deadline import check_deadline
from memagent.core.errors import DeadlineExceeded
from memagent.core.jsontext import JsonSchema
from memagent.index import QueryFacts
from memagent.index.temporal import day_words, parse_as_of
from memagent.llm import LLM, Message, Usage
from memagent.memory.profile import worth_learning

if TYPE_CHECKING:
    from memagent.stores import Stores


class Agent:
    """A memory assistant over one memory home and one model.

    `Agent("~/mem", model="embedded").run("What is my cat called?")` just works:
    `home` is a folder (created and initialised if missing; None: `$MEMAGENT_HOME`,
    else `~/.memagent`) or a `MemoryHome`, and the model is an `LLM` or a spec
    (`llm` or `model=`; default: the home's `llm.model`).

    How it answers is one `AgentConfig`, validated: `config` (default: the home's
    `[agent]` section), e.g. `config=home.config.agent.model_copy(update={"recall_k":
    8})`, with the keyword overrides of `AgentOverrides` on top (`mode="python"`,
    `max_steps`, `planning_interval`, `learn_profile`, `prompt_set`,
    `retrieval=False`, `structured=False`; None keeps the config's value): the
    settings callers choose per agent, kept as keywords so the CLI's flags, the
    server and the common call stay one line. A bad value is `InvalidInput`.

    `persona` picks this agent's persona (default: the home's active one, followed
    when `/persona use` changes it); `tools` adds tools; `conversation` resumes a
    saved conversation by id; `stores` shares stores opened elsewhere. `record=False`
    answers without writing anything (no exchange, conversation, trace or
    learning). `learn_earlier=False` leaves the statements earlier sessions did not
    learn for a later agent (the model has one slot: a one-question agent's answer
    would wait behind them). Use as a context manager or call `close()` to flush the background
    writes.
    """

    def __init__(
        self,
        home: MemoryHome | str | os.PathLike[str] | None = None,
        llm: LLM | str | None = None,
        *,
        model: str | None = None,
        config: AgentConfig | None = None,
        persona: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        conversation: str | None = None,
        stores: Stores | None = None,
        embeddings: bool | None = None,
        record: bool = True,
        learn_earlier: bool = True,
        **overrides: Unpack[AgentOverrides],
    ) -> None:
        self.home = home = open_or_create_home(home)
        self.config = agent_config(config if config is not None else home.config.agent, overrides)
        self.llm = open_model(home, llm, model)
        self.record = record
        self.max_tokens, self.temperature = home.config.llm.max_tokens, home.config.llm.temperature
        prompt_set = self.config.prompt_set or default_prompt_set(self.llm.name, self.config.mode)
        self.prompts: PromptSet = load_prompt_set(prompt_set)
        self.memory = MemoryAccess(home, embeddings=embeddings, stores=stores)
        state = self.memory.stores.state
        shared = self.memory.stores.db is not None  # choices live in the database then
        self.personas = Personas(home, state if shared else None)
        self.persona_name = persona
        if persona is not None:
            self.personas.load(persona)  # fail early on an unknown persona
        self.registry = agent_registry(self.memory.tools(), tools)
        self.conversations = Conversations(home, state)
        self.traces = Traces(home, state)
        self.conversation: Conversation = (
            self.conversations.load(conversation) if conversation else self.conversations.new()
        )
        self.python = PythonMode(home, self.memory, self.registry)
        self._writer = BackgroundWriter()
        self._learner = BackgroundWriter("memagent-agent-learner")
        self.background_errors = self._learner.errors = self._writer.errors
        self.learning_left = 0
        """Statements left unlearned by a bounded `close` (queued in the home)."""
        self.told = 0
        """Statements this agent's own turns queued for learning (not earlier ones)."""
        self._queued: set[str] = set()
        if learn_earlier and self.config.learn_profile and self.record:  # earlier sessions' left
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
        if not (self.config.learn_profile and self.record):
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
                self.traces.save(trace)

        return job

    @property
    def conversation_id(self) -> str:
        return self.conversation.id

    # -- prompt --------------------------------------------------------------------------
    def tool_cards(self) -> list[ToolCard]:
        cards = [t.card() for t in self.registry.loaded_tools()]
        if self.config.mode == "python":
            cards = [*vault_function_cards(), *cards]
        return cards

    def persona_text(self) -> str:
        try:
            persona = self.personas.load(self.persona_name or self.personas.active_name())
            return self.personas.render(persona)
        except MemagentError:
            if self.persona_name is not None:
                raise
            return FALLBACK_PERSONA

    def schema(self) -> JsonSchema:
        if self.prompts.schema == "reply":
            return reply_schema()
        return step_schema(self.config.mode, self.registry.loaded_tools())

    def system_prompt(self) -> str:
        schema = self.schema()
        return self.prompts.render(
            "system",
            persona=self.persona_text(),
            tools=self.tool_cards(),
            vault_actions=", ".join(SPECS),
            schema=json.dumps(schema, ensure_ascii=False),
        )

    def _history(self) -> list[Message]:
        turns = self.prompts.history_turns
        if turns is None:
            turns = self.config.history_turns
        msgs = self.conversation.messages[-2 * turns :] if turns else []
        out = []
        for m in msgs:
            if m.role == "assistant":
                content = (
                    json.dumps({"reply": m.content}, ensure_ascii=False)
                    if self.config.structured
                    else f"<reply>{m.content}</reply>"
                )
            else:
                content = self.prompts.render("user_turn", memory="", message=m.content)
            out.append(Message.model_validate({"role": m.role, "content": content}))
        return out

    # -- one turn: prepare → act → finish ------------------------------------------------
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
        """Answer one user message in three steps (see the module docstring). A chat
        command (`/help`, …) is answered here: no model call, nothing stored.

        `as_of` (a datetime, a date, or ISO 8601 text; `InvalidInput` when
        malformed): when the question is asked. It is "now" for relative times in
        it ("last week"), for recall's time signals (recency, time ranges) and for
        the answer's prompt (which then says the date); None: the clock. `on_text`
        gets the reply as it is written, then any rest the finished reply adds."""
        message = check_message(message)
        asked = parse_as_of(as_of) if as_of is not None else None
        command = parse_command(message)
        if command is not None:
            answer = self.run_command(command)
            if on_text is not None:
                on_text(answer)
            return TurnResult(reply=answer, ok=True, conversation_id=self.conversation.id, steps=0)
        prepared = self.prepare(message, asked)
        acted = self.act(prepared, on_text)
        return self.finish(prepared, acted, on_text)

    def prepare(self, message: str, asked: datetime | None = None) -> PreparedTurn:
        """Step 1: read `message` once into `QueryFacts`, put memory in context
        (recall and speaker attribution, unless `retrieval` is off), build the
        prompt, and run the honesty checks, whose refusal is then the reply
        (`check_question`; its grounding check may ask the model yes or no).
        `asked`: when the question is asked (None: now)."""
        message = check_message(message)
        started = time.perf_counter()
        now = asked.timestamp() if asked is not None else None
        today = day_words(asked) if asked is not None else None
        facts = QueryFacts.read(message, now)  # the one reading of the message
        trace = Trace(self.conversation.id, self.conversation.turns + 1, self.llm.name,
                      self.config.mode, message)  # fmt: skip
        ctx = self._context(facts, trace, asked)
        base = [
            Message(role="system", content=self.system_prompt()),
            *self.prompts.example_messages(structured=self.config.structured),
            *self._history(),
        ]
        user_turn = self.prompts.render(
            "user_turn",
            memory=ctx.text,
            message=message,
            asking=self._recalls_for(facts),
            small_talk=facts.small_talk,
            today=today,
        )
        usage = Usage()
        asking = self.config.retrieval and facts.request and not facts.small_talk
        checked = check_question(llm=self.llm, prompts=self.prompts, memory=self.memory,
            cfg=self.config, base=base, turn=user_turn, facts=facts, ctx=ctx, asking=asking,
            usage=usage, trace=trace, now=now, today=today)  # fmt: skip
        work = [Message(role="user", content=user_turn)]
        return PreparedTurn(facts, asked, trace, ctx, base, work, checked, usage, started)

    def _context(self, facts: QueryFacts, trace: Trace, asked: datetime | None) -> MemoryContext:
        """Memory for the message (none with `retrieval` off), noted in the trace."""
        ctx = MemoryContext("", 0)
        cfg = self.config
        if cfg.retrieval:
            k = cfg.recall_k if self._recalls_for(facts) else 0
            try:
                ctx = self.memory.context(facts, budget_tokens=cfg.context_tokens, k=k,
                                          min_ratio=cfg.recall_min_ratio)  # fmt: skip
            except MemagentError as exc:
                trace.memory.error = str(exc)
        trace.memory.tokens, trace.memory.sources = ctx.tokens, ctx.sources
        if asked is not None:
            trace.memory.as_of = asked.isoformat()
        trace.memory.chunks_unavailable = self.memory.chunks_error
        return ctx

    def _recalls_for(self, facts: QueryFacts) -> bool:
        return self.prompts.recall_for == "all" or facts.request

    def act(self, turn: PreparedTurn, on_text: TextCallback | None = None) -> Acted:
        """Step 2: ask the model for steps and run them, until a reply, `max_steps`,
        or two model failures in a row; with a refusal from `prepare`, none runs.
        `on_text` gets the reply as the model writes it (`ReplyStreamer`)."""
        acted = Acted(reply=turn.checked.reply)
        failures = 0
        for step_no in range(1, 0 if acted.reply is not None else self.config.max_steps + 1):
            check_deadline("the agent turn")  # a request's budget stops the loop between steps
            acted.steps = step_no
            if self._plans_at(step_no):
                write_plan(self.llm, self.prompts, turn.base, turn.work, step_no, turn.usage,
                           turn.trace, structured=self.config.structured,
                           max_tokens=self.max_tokens, temperature=self.temperature)  # fmt: skip
            record = StepRecord(step_no)
            turn.trace.steps.append(record)
            t0 = time.perf_counter()
            streamer = ReplyStreamer(on_text, turn.shape) if on_text is not None else None
            try:
                schema = self.schema() if self.config.structured else None
                text = ask_for_step(self.llm, turn.messages, turn.usage, streamer, schema=schema,
                                    max_tokens=self.max_tokens,
                                    temperature=self.temperature)  # fmt: skip
            except DeadlineExceeded:
                raise  # the request's budget stopped the model mid-reply: the turn ends
            except MemagentError as exc:
                failures += 1
                acted.error = record.error = f"the model failed: {exc}"
                record.seconds = round(time.perf_counter() - t0, 3)
                if failures >= 2:
                    break
                continue
            failures = 0
            if streamer is not None:
                acted.emitted += streamer.emitted
            record.raw, record.seconds = text, round(time.perf_counter() - t0, 3)
            if self._step(turn, acted, record):
                break
        return acted

    def _step(self, turn: PreparedTurn, acted: Acted, record: StepRecord) -> bool:
        """One model response (`record.raw`): parsed, its actions or code run and the
        result fed back; True when it gives the reply (`acted.reply`)."""
        text = record.raw or ""
        try:
            parsed = parse_step(text, self.config.mode, structured=self.config.structured)
            if text.strip() in acted.seen:
                raise StepInvalid(
                    "you repeated your previous response exactly; its result will not "
                    "change. Do something different, or give the reply now."
                )
        except StepInvalid as exc:
            acted.error = record.error = str(exc)
            feed_result(self.prompts, turn.work, text, {"error": acted.error})
            return False
        record.parsed = parsed
        result: BatchResult | PythonRun
        if parsed.actions is not None:
            result = batch = run_action_batch(parsed.actions, self.registry, self.memory)
            error, wrote = batch.error, batch.writes
            if batch.ok:
                acted.failed_write = False
        elif parsed.python is not None:
            resume = bool(self.conversation.messages)
            result = run = self.python.run(parsed.python, self.conversation.id, resume=resume)
            if run.error is None and run.final:
                record.result, acted.reply = run, as_text(run.result)
                return True
            error = None if run.error is None else f"the code failed: {run.error}"
            wrote = bool(run.rolled_back)
        else:
            acted.reply = parsed.reply
            return True
        record.result = result
        if error is not None:
            acted.error = error
            acted.failed_write = acted.failed_write or wrote
        else:
            acted.seen.add(text.strip())
            if parsed.reply is not None:
                acted.reply = parsed.reply
                return True
        feed_result(self.prompts, turn.work, text, result.to_json())
        return False

    def _plans_at(self, step_no: int) -> bool:
        n = self.config.planning_interval
        return n is not None and "planning" in self.prompts.templates and (step_no - 1) % n == 0

    def finish(
        self, turn: PreparedTurn, acted: Acted, on_text: TextCallback | None = None
    ) -> TurnResult:
        """Step 3: the reply as the user gets it (in their voice, `to_user`; a relative
        date it copied from memory made the date it meant; refused when it shows by
        itself that it answers nothing, `check_reply`; without a valid reply, the
        honest fallback that says why), its rest sent to `on_text`,
        the exchange stored before the reply is final, and the conversation, the
        trace and profile learning left to the background (`_write_turn`)."""
        ok = acted.reply is not None
        if acted.reply is None:
            reply = honest_reply(acted.error, acted.failed_write, self.config.max_steps)
        else:
            reply = to_user(acted.reply, turn.message)
            reply = resolve_copied_dates(reply, turn.message, turn.context.text)
            reply = check_reply(turn.checked, reply, message=turn.message, ctx=turn.context,
                                prompts=self.prompts, trace=turn.trace,
                                streamed=bool(acted.emitted))  # fmt: skip
        emitted = acted.emitted
        if on_text is not None and emitted.strip() != reply.strip():
            if emitted and reply.startswith(emitted):  # the rest of a reply shown in part
                on_text(reply[len(emitted) :])
            else:
                on_text(("\n" if emitted else "") + reply)
        trace, checked = turn.trace, turn.checked
        trace.reply, trace.ok = reply, ok
        trace.seconds = round(time.perf_counter() - turn.started, 3)
        result = TurnResult(
            reply=reply,
            ok=ok,
            conversation_id=self.conversation.id,
            steps=acted.steps,
            usage=turn.usage,
            seconds=time.perf_counter() - turn.started,
            memory_tokens=turn.context.tokens,
            memory_sources=turn.context.sources,
            error=None if ok else acted.error,
            p_grounded=trace.memory.verify.p_yes if trace.memory.verify else None,
            refused_by=checked.refused_by,
            check_tokens=checked.tokens,
            check_seconds=checked.seconds,
        )
        self._write_turn(turn.facts, reply, ok, trace)
        return result

    # -- commands ---------------------------------------------------------------------------
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

    # -- after the reply ------------------------------------------------------------------
    def _write_turn(self, facts: QueryFacts, reply: str, ok: bool, trace: Trace) -> None:
        """Store the exchange now (read your writes), the rest in the background."""
        if not self.record:
            return
        message = facts.text
        conv = self.conversation
        session = self.python.session if self.config.mode == "python" else None
        memory = self.memory
        # a question may carry a fact ("I'm vegan, any recipe?"); one the screen
        # drops is never queued (behind a slow model it would keep the queue full)
        learn = self.config.learn_profile and ok and not facts.small_talk
        learn = learn and worth_learning(message)
        turn_no = trace.turn

        def job() -> None:
            notes = trace.background
            if not shared:
                self.conversations.save(snapshot)
                if session is not None:
                    self.python.save(session, conv.id, notes)
            if learn:  # slow (LLM calls): its own thread, so exchanges are stored at once
                try:  # queued on disk first: an exit before it is learned loses nothing
                    item = self.pending_learning.add(message, conv.id, turn_no)
                except MemagentError as exc:
                    notes.append(f"profile: not queued for learning: {exc}")
                else:
                    self.told += 1
                    self._learner.submit(f"learn {turn_no}", self._learn_job(item, trace))
                    return
            self.traces.save(trace)

        # Read your writes: the exchange's chunk is durable before the reply is final
        # (so "Noted" is true, and the next turn's recall, in this process or another
        # server's, finds it); only the conversation file, the trace and profile
        # learning are left to the background.
        try:
            # an honest fallback is not worth remembering; what the user said is
            ids = memory.store_exchange(conv.id, facts, reply if ok else "", turn=turn_no)
            trace.background.append(f"stored exchange as {ids}" if ids else "no chunk store")
        except MemagentError as exc:
            trace.background.append(f"exchange not stored: {exc}")
        # the next turn sees this exchange at once; the file is written in the background
        Conversations.add_exchange(conv, message, reply)
        snapshot = conv.model_copy(deep=True)
        # In a shared database another server may take the next turn: the
        # conversation is saved before the reply (one row), the rest after it.
        shared = memory.stores.db is not None
        if shared:
            self.conversations.save(snapshot)
            if session is not None:  # and the Python session's variables with it
                self.python.save(session, conv.id, trace.background)
        self._writer.submit(f"turn {turn_no}", job)
