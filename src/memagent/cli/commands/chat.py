"""`memagent chat` (interactive, streaming; or one message a line from piped
stdin) and `memagent ask QUESTION` (prints only the answer)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from memagent.cli._common import HomeOption, console, err_console, home_from_option, print_json

if TYPE_CHECKING:
    from datetime import datetime

    from rich.console import Console

    from memagent.agent import Agent
    from memagent.agent.deep import DeepJson
    from memagent.agent.turn import TurnJson
    from memagent.core import MemoryHome

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="embedded | openai:NAME | scripted:PATH.json (default: config llm.model).",
        show_default=False,
    ),
]
ModeOption = Annotated[
    str | None,
    typer.Option("--mode", help="json | python (default: config agent.mode).", show_default=False),
]
PersonaOption = Annotated[
    str | None,
    typer.Option(
        "--persona", help="Persona for this session (default: the active one).", show_default=False
    ),
]
MaxStepsOption = Annotated[
    int | None,
    typer.Option("--max-steps", min=1, max=50, help="Model steps per turn.", show_default=False),
]
PlanningOption = Annotated[
    int | None,
    typer.Option("--planning-interval", min=1, help="Plan every N steps.", show_default=False),
]
LearnOption = Annotated[
    bool | None,
    typer.Option(
        "--learn/--no-learn",
        help="Run the profile pipeline on each message (default: config agent.learn_profile).",
        show_default=False,
    ),
]
PromptSetOption = Annotated[
    str | None,
    typer.Option(
        "--prompt-set",
        help="instruct | qa | small | json | python (default: chosen by model and mode; "
        "json gives the embedded model note-editing actions, with llm.n_ctx >= 8192).",
        show_default=False,
    ),
]
EXIT_WORDS = {"/exit", "/quit", "exit", "quit"}


def _agent(
    home: MemoryHome,
    model: str | None,
    mode: str | None,
    persona: str | None,
    max_steps: int | None,
    planning_interval: int | None,
    conversation: str | None = None,
    learn: bool | None = None,
    *,
    short: bool = False,
    prompt_set: str | None = None,
    learn_earlier: bool = True,
) -> Agent:
    from memagent.agent import Agent
    from memagent.llm import load_llm

    llm = load_llm(model or home.config.llm.model, home.config.llm)
    return Agent(
        home,
        llm,
        prompt_set="qa" if short else prompt_set,
        mode=mode,
        persona=persona,
        max_steps=max_steps,
        planning_interval=planning_interval,
        conversation=conversation,
        learn_profile=learn,
        learn_earlier=learn_earlier,
    )


LEARN_WAIT_S = 5.0
"""How long leaving `chat`/`ask` waits for profile learning (minutes on the embedded
model); what is left stays queued in the home and is learned by the next chat or
ask (`memagent.agent.learning`). An `ask` that told nothing (a question) does not
wait for what earlier sessions left: with the model not loaded it could not learn
it in time, and each such ask took 5 s longer."""


def _finish(agent: Agent, *, quiet: bool, learn_earlier: bool = False) -> None:
    from memagent.agent import write_hud

    if learn_earlier:  # statements an earlier chat left unlearned: now, not mid-chat
        agent.learn_pending()
    wait = LEARN_WAIT_S if learn_earlier or agent.told else 0.0
    if quiet:
        agent.close(learn_wait=wait)
    else:
        with err_console.status("saving memory…"):
            agent.close(learn_wait=wait)
    for error in agent.background_errors:
        err_console.print(f"[yellow]warning:[/] {error}", highlight=False)
    write_hud(agent.home)
    if agent.learning_left:
        err_console.print(
            f"[dim]{agent.learning_left} statement(s) not learned into your profile yet: "
            "kept in the memory home and learned by your next chat.[/]",
            highlight=False,
        )


def _exit_now(agent: Agent, code: int) -> None:
    """Leave at once when a profile-learning model call is still running in the
    background (its statement is queued on disk): waiting for it is what the
    bounded close avoids, and tearing the model down under it is not safe."""
    if agent.learning_left:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def chat(
    home: HomeOption = None,
    model: ModelOption = None,
    mode: ModeOption = None,
    persona: PersonaOption = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the most recent conversation.")
    ] = False,
    conversation: Annotated[
        str | None,
        typer.Option("--conversation", help="Continue this conversation id.", show_default=False),
    ] = None,
    max_steps: MaxStepsOption = None,
    planning_interval: PlanningOption = None,
    learn: LearnOption = None,
    prompt_set: PromptSetOption = None,
) -> None:
    """Chat with your memory assistant (reads one message a line when stdin is piped)."""
    from memagent.agent import Conversations
    from memagent.core import NotFound

    mh = home_from_option(home)
    conv_id = conversation
    if resume and conv_id is None:
        latest = Conversations(mh).latest()
        if latest is None:
            raise NotFound("no conversation to resume yet: start one with `memagent chat`")
        conv_id = latest.id
    interactive = sys.stdin.isatty()
    failed = 0
    agent = _agent(
        mh, model, mode, persona, max_steps, planning_interval, conv_id, learn,
        prompt_set=prompt_set,
    )  # fmt: skip
    try:
        if interactive:
            _interactive(agent, resumed=conv_id is not None)
        else:
            failed = _piped(agent)
    finally:
        _finish(agent, quiet=not interactive, learn_earlier=True)
    _exit_now(agent, 1 if not interactive and failed else 0)
    if not interactive and failed:
        raise typer.Exit(1)


def _is_command(message: str) -> bool:
    from memagent.agent.commands import parse_command

    return parse_command(message) is not None


def _piped(agent: Agent) -> int:
    """One reply line per input line; a bad line is reported on stderr and skipped
    (an empty reply line keeps the output aligned). Returns how many failed."""
    from memagent.core import MemagentError

    failed = 0
    for number, line in enumerate(sys.stdin, 1):
        message = line.strip()
        if not message:
            continue
        if message in EXIT_WORDS:
            break
        try:
            result = agent.turn(message)
        except MemagentError as exc:
            failed += 1
            err_console.print(f"[bold red]error:[/] line {number}: {exc}", highlight=False)
            sys.stdout.write("\n")
            continue
        if not result.ok:  # the model or server failed: not an answer
            failed += 1
            err_console.print(
                f"[bold red]error:[/] line {number}: {result.error or result.reply}",
                highlight=False,
                markup=False,
            )
            sys.stdout.write("\n")
            continue
        sys.stdout.write(result.reply.replace("\n", " ") + "\n")
        sys.stdout.flush()
    return failed


class Thinking:
    """ "thinking…" (a Rich spinner) from sending a message until the reply's first
    token; then the `assistant ›` prefix and the reply as it streams (`piece`).
    With `show_reply=False` (a chat command) only the spinner, for the wait."""

    PREFIX = "[bold cyan]assistant ›[/] "

    def __init__(self, out: Console, *, show_reply: bool = True) -> None:
        from rich.live import Live
        from rich.spinner import Spinner

        self.out = out
        self.show_reply = show_reply
        self.started = False
        self.live = Live(
            Spinner("dots", text="[dim]thinking…[/]"),
            console=out,
            transient=True,
            refresh_per_second=10,
        )

    def __enter__(self) -> Thinking:
        self.live.start(refresh=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.stop()

    def piece(self, text: str) -> None:
        if not self.started:
            self.live.stop()
            self.started = True
            if self.show_reply:
                self.out.print(self.PREFIX, end="")
        self.out.print(text, end="", highlight=False, markup=False)


def _interactive(agent: Agent, *, resumed: bool) -> None:
    from memagent.core import MemagentError

    console.print(
        f"[bold]memagent[/] · model [cyan]{agent.llm.name}[/] · mode {agent.config.mode} · "
        f"conversation {agent.conversation_id}" + (" (resumed)" if resumed else ""),
        highlight=False,
    )
    if resumed:
        for m in agent.conversation.messages[-6:]:
            who = "you" if m.role == "user" else "assistant"
            console.print(f"[dim]{who}: {m.content}[/]", highlight=False)
    console.print("[dim]Type a message; /help lists the commands, /exit leaves.[/]")
    if agent.llm.name.startswith("embedded"):
        with err_console.status("loading the embedded model…"):
            agent.llm.load()  # type: ignore[attr-defined]
    while True:
        try:
            message = console.input("[bold green]you ›[/] ").strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not message:
            continue
        if message in EXIT_WORDS:
            return
        command = _is_command(message)
        thinking = Thinking(console, show_reply=not command)
        try:
            with thinking:
                result = agent.turn(message, on_text=None if command else thinking.piece)
        except MemagentError as exc:
            console.print()
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
            continue
        except KeyboardInterrupt:
            console.print("\n[dim](interrupted)[/]")
            continue
        if command:
            console.print(result.reply, highlight=False, markup=False)
            continue
        if not thinking.started and result.ok:  # nothing streamed: the whole reply
            thinking.piece(result.reply)
        console.print()
        if not result.ok:
            err_console.print(f"[bold red]error:[/] {escape(result.error or '')}", highlight=False)
            continue
        usage = result.usage
        console.print(
            f"[dim]{result.seconds:.1f}s · {result.steps} step(s) · "
            f"{usage.prompt_tokens}+{usage.completion_tokens} tokens · "
            f"{len(result.memory_sources)} memories in context[/]",
            highlight=False,
        )


def ask(
    question: Annotated[
        str | None, typer.Argument(help="The question (or --batch FILE).", show_default=False)
    ] = None,
    home: HomeOption = None,
    model: ModelOption = None,
    mode: ModeOption = None,
    persona: PersonaOption = None,
    deep: Annotated[
        bool,
        typer.Option("--deep", help="Recursive retrieval: the model searches memory with code."),
    ] = False,
    max_steps: MaxStepsOption = None,
    learn: LearnOption = None,
    prompt_set: PromptSetOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the whole result as JSON.")
    ] = False,
    short: Annotated[
        bool, typer.Option("--short", help="Answer with a short phrase (the qa prompt set).")
    ] = False,
    batch: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help='JSON lines of {"id", "question", "asked_at"?}: one answer line each, one '
            "loaded model; nothing is stored.",
            show_default=False,
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="When the question is asked (YYYY-MM-DD or ISO 8601): 'now' for 'last "
            "week', 'how many days ago' and recall's time signals. Default: now.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Ask one question; prints only the answer on stdout."""
    from memagent.agent.turn import check_message
    from memagent.core import InvalidInput
    from memagent.index.temporal import parse_as_of

    asked = parse_as_of(as_of) if as_of is not None else None  # before anything loads
    mh = home_from_option(home)
    if (question is None) == (batch is None):
        raise InvalidInput("give a QUESTION or --batch FILE (one of them)")
    if batch is not None:
        if deep:
            raise InvalidInput("--batch and --deep do not go together")
        _ask_batch(
            mh, batch, model, mode, persona, max_steps, short=short, as_json=as_json, as_of=asked
        )
        return
    assert question is not None
    question = check_message(question)
    if deep:
        if asked is not None:
            raise InvalidInput("--as-of and --deep do not go together")
        _ask_deep(mh, model, question, max_steps, as_json=as_json)
        return
    # earlier chats' unlearned statements wait for the next chat: learning them now
    # would put this answer behind them on the model's one slot
    agent = _agent(
        mh, model, mode, persona, max_steps, None, None, learn, short=short,
        prompt_set=prompt_set, learn_earlier=False,
    )  # fmt: skip
    try:
        turn = agent.turn(question, as_of=asked)
        if not turn.ok:  # the model or server failed: say so on stderr, exit non-zero
            if as_json:
                print_json(turn.to_json())
            err_console.print(f"[bold red]error:[/] {escape(turn.error or turn.reply)}")
            raise typer.Exit(1)
        # the answer goes out first; the memory writes finish after it
        _print_answer(turn.to_json(), turn.reply, as_json=as_json)
    finally:
        _finish(agent, quiet=True)
    _exit_now(agent, 0)


def _ask_deep(
    mh: MemoryHome, model: str | None, question: str, max_steps: int | None, *, as_json: bool
) -> None:
    """`ask --deep`: recursive retrieval (`memagent.agent.deep`), its steps traced."""
    from memagent.agent import MemoryAccess, Trace, Traces, deep_ask
    from memagent.llm import load_llm

    llm = load_llm(model or mh.config.llm.model, mh.config.llm)
    memory = MemoryAccess(mh)
    try:
        result = deep_ask(memory, llm, question, max_iterations=max_steps or 6)
    finally:
        memory.close()
    trace = Trace("deep", 1, llm.name, "deep", question, steps=result.steps)
    trace.reply, trace.ok, trace.seconds = result.answer, result.ok, round(result.seconds, 3)
    Traces(mh).save(trace)
    if not result.ok:
        if as_json:
            print_json(result.to_json())
        err_console.print(f"[bold red]error:[/] {escape(result.answer)}")
        raise typer.Exit(1)
    _print_answer(result.to_json(), result.answer, as_json=as_json)


def _ask_batch(
    mh: MemoryHome,
    path: Path,
    model: str | None,
    mode: str | None,
    persona: str | None,
    max_steps: int | None,
    *,
    short: bool,
    as_json: bool,
    as_of: datetime | None = None,
) -> None:
    from memagent.cli._ask_batch import answer_batch, read_batch

    questions = read_batch(path)  # all checked before the model loads
    agent = _agent(mh, model, mode, persona, max_steps, None, None, False, short=short)
    agent.record = False
    try:
        failed = answer_batch(agent, questions, as_json=as_json, as_of=as_of)
    finally:
        agent.close()
    if failed:
        err_console.print(f"[bold red]error:[/] {failed} of {len(questions)} questions failed")
        raise typer.Exit(1)


def _print_answer(out: TurnJson | DeepJson, answer: str, *, as_json: bool) -> None:
    if as_json:
        print_json(out)
    else:
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
    app.command("ask")(ask)
