"""`memagent persona ls|show|use|set`, `memagent hud`, `memagent trace last`."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markdown import Markdown
from rich.table import Table

from memagent.cli._common import HomeOption, console, home_from_option, print_json

persona_app = typer.Typer(help="Personas: list, show, choose, and tune their sliders.")
trace_app = typer.Typer(help="Traces of agent turns.")
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@persona_app.command("ls")
def persona_ls(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """List personas; the active one is marked."""
    from memagent.agent import Personas

    personas = Personas(home_from_option(home))
    active = personas.active_name()
    shown = [(personas.load(n), n == active) for n in personas.names()]
    if as_json:
        print_json([p.to_json() | {"active": on} for p, on in shown])
        return
    table = Table("", "persona", "description", "sliders")
    for p, on in shown:
        sliders = " ".join(f"{k}={v}" for k, v in p.sliders.items())
        table.add_row("*" if on else "", p.name, p.description, sliders)
    console.print(table)


@persona_app.command("show")
def persona_show(
    name: Annotated[str | None, typer.Argument(help="Persona (default: the active one).")] = None,
    home: HomeOption = None,
) -> None:
    """Show how a persona is rendered into the system prompt."""
    from memagent.agent import Personas

    personas = Personas(home_from_option(home))
    persona = personas.load(name or personas.active_name())
    console.print(f"[bold]{persona.name}[/] — {persona.description}", highlight=False)
    console.print(personas.render(persona), highlight=False, markup=False)


@persona_app.command("use")
def persona_use(
    name: Annotated[str, typer.Argument(help="Persona name, e.g. TECHNICAL_COPILOT.")],
    home: HomeOption = None,
) -> None:
    """Make NAME the active persona."""
    from memagent.agent import Personas

    persona = Personas(home_from_option(home)).use(name)
    console.print(f"active persona: [bold]{persona.name}[/]", highlight=False)


@persona_app.command("set")
def persona_set(
    slider: Annotated[str, typer.Argument(help="Slider, e.g. humor.")],
    value: Annotated[int, typer.Argument(min=0, max=100, help="0-100.")],
    home: HomeOption = None,
    persona: Annotated[
        str | None, typer.Option("--persona", help="Persona to change (default: active).")
    ] = None,
) -> None:
    """Set a slider (0-100) of the active persona."""
    from memagent.agent import Personas

    changed = Personas(home_from_option(home)).set_slider(slider, value, persona=persona)
    console.print(
        f"{changed.name}: {slider.lower()} = {changed.sliders[slider.lower()]}", highlight=False
    )


def hud(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Regenerate gauges/LIVEHUD.md and show it."""
    from memagent.agent import render_hud, write_hud

    _, status = write_hud(home_from_option(home))
    if as_json:
        print_json(status)
    else:
        console.print(Markdown(render_hud(status)))


@trace_app.command("last")
def trace_last(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Show every step of the most recent agent turn."""
    from memagent.agent import Traces

    doc = Traces(home_from_option(home)).last()
    if as_json:
        print_json(doc)
        return
    console.print(
        f"[bold]{doc['file']}[/] · {doc['model']} · {doc['mode']} · {doc['seconds']}s · "
        f"memory {doc['memory'].get('tokens', 0)} tokens",
        highlight=False,
    )
    console.print(f"[green]user:[/] {doc['message']}", highlight=False, markup=True)
    for step in doc["steps"]:
        number = step.get("step", step.get("iteration", "?"))
        head = f"step {number} ({step.get('kind', 'model')}, {step.get('seconds', '-')}s)"
        console.print(f"[bold]{head}[/]", highlight=False)
        for key in ("plan", "raw", "error"):
            if step.get(key):
                console.print(f"  {key}: {step[key]}", highlight=False, markup=False)
        if "result" in step:
            text = json.dumps(step["result"], ensure_ascii=False)[:1500]
            console.print(f"  result: {text}", highlight=False, markup=False)
    status = "ok" if doc["ok"] else "fallback"
    console.print(f"[cyan]reply ({status}):[/] {doc['reply']}", highlight=False)
    for note in doc.get("background", []):
        console.print(f"[dim]background: {note}[/]", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(persona_app, name="persona")
    app.add_typer(trace_app, name="trace")
    app.command("hud")(hud)
