"""Personas (`personalities/NAME.md`) and slider descriptions (`sliders/NAME.md`).

A persona file is markdown with a YAML front matter: `name`, `description` and
`sliders` (dimension → 0..100); its body is the persona's own instruction. A
slider file describes one dimension with what it means at 0, 50 and 100
(`- 0: …`, `- 50: …`, `- 100: …`). The active persona (config `agent.persona`)
is rendered into the system prompt: its body, then each slider with the text of
the anchor nearest its value. Users edit these files freely; a broken file is
reported with its path, never silently ignored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import yaml

from memagent.core import CorruptFile, InvalidInput, MemoryHome, NotFound
from memagent.core.config import Config, load_config
from memagent.core.starter_files import init_personas as init_personas  # the starter files
from memagent.core.state import State

_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n?(.*)\Z", re.DOTALL)
_ANCHOR = re.compile(r"^\s*-\s*(0|50|100)\s*:\s*(.+?)\s*$", re.MULTILINE)
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
ANCHORS = (0, 50, 100)
MAX_PERSONA_BYTES = 64 * 1024
STARTER_PERSONAS = ("BASE", "RESEARCH_ANALYST", "CREATIVE_DIRECTOR", "TECHNICAL_COPILOT")
ACTOR = "persona"
CHOICES = "personas/choices.json"


class PersonaJson(TypedDict):
    name: str
    description: str
    sliders: dict[str, int]
    instructions: str


class Choices(TypedDict, total=False):
    """The user's choices kept in shared state (`personas/choices.json`): the active
    persona and slider values set per persona."""

    active: str
    sliders: dict[str, dict[str, int]]


def _valid_choices(doc: object) -> Choices:
    """The choices a stored document holds; anything else in it is left out."""
    if not isinstance(doc, dict):
        return {}
    out: Choices = {}
    if isinstance(active := doc.get("active"), str):
        out["active"] = active
    if isinstance(sliders := doc.get("sliders"), dict):
        out["sliders"] = {
            str(name): {
                str(k): v for k, v in values.items() if isinstance(v, int) and 0 <= v <= 100
            }
            for name, values in sliders.items()
            if isinstance(values, dict)
        }
    return out


@dataclass
class Slider:
    """One dimension: its title, what it is, and the text at 0, 50 and 100."""

    name: str
    title: str
    summary: str
    anchors: dict[int, str] = field(default_factory=dict)

    def describe(self, value: int) -> str:
        nearest = min(self.anchors, key=lambda a: abs(a - value)) if self.anchors else None
        text = self.anchors.get(nearest, "") if nearest is not None else ""
        return f"{self.title} {value}/100: {text}".rstrip(": ")


@dataclass
class Persona:
    name: str
    description: str
    sliders: dict[str, int]
    body: str
    path: Path | None = None

    def to_json(self) -> PersonaJson:
        return {
            "name": self.name,
            "description": self.description,
            "sliders": dict(self.sliders),
            "instructions": self.body,
        }


def check_name(name: str, what: str = "persona") -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise InvalidInput(
            f"invalid {what} name {str(name)[:80]!r}: 1-64 letters, digits, '_' or '-', "
            "starting with a letter"
        )
    return name


def _read(path: Path, shown: str) -> str:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise NotFound(f"no file {shown}") from None
    if size > MAX_PERSONA_BYTES:
        raise CorruptFile(shown, f"{size} bytes is over the limit of {MAX_PERSONA_BYTES}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFile(shown, f"not UTF-8 text: {exc.reason}") from exc


def _front_matter(text: str, shown: str) -> tuple[dict[str, Any], str]:
    m = _FRONT.match(text.replace("\r\n", "\n"))
    if not m:
        raise CorruptFile(shown, "missing the front matter (a '---' block at the top)")
    try:
        meta = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise CorruptFile(shown, f"front matter is not valid YAML: {exc}", line) from exc
    if not isinstance(meta, dict):
        raise CorruptFile(shown, "front matter must be a mapping")
    return meta, m.group(2).strip()


def parse_persona(text: str, shown: str, path: Path | None = None) -> Persona:
    meta, body = _front_matter(text, shown)
    name = meta.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise CorruptFile(shown, "'name' must be a persona name (letters, digits, '_', '-')")
    raw = meta.get("sliders") or {}
    if not isinstance(raw, dict):
        raise CorruptFile(shown, "'sliders' must map slider names to 0-100")
    sliders: dict[str, int] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not NAME_RE.match(key):
            raise CorruptFile(shown, f"bad slider name {key!r}")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
            raise CorruptFile(shown, f"slider {key!r} must be an integer 0-100, got {value!r}")
        sliders[key.lower()] = value
    description = meta.get("description") or ""
    if not isinstance(description, str):
        raise CorruptFile(shown, "'description' must be text")
    return Persona(name, description.strip(), sliders, body, path)


def render_persona_file(persona: Persona) -> str:
    meta = {
        "name": persona.name,
        "description": persona.description,
        "sliders": dict(persona.sliders),
    }
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip()
    return f"---\n{front}\n---\n{persona.body.strip()}\n"


def parse_slider(text: str, shown: str) -> Slider:
    meta, body = _front_matter(text, shown)
    name = meta.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise CorruptFile(shown, "'name' must be a slider name")
    title = meta.get("title") or name.capitalize()
    anchors = {int(m.group(1)): m.group(2) for m in _ANCHOR.finditer(body)}
    missing = [a for a in ANCHORS if a not in anchors]
    if missing:
        raise CorruptFile(
            shown, f"needs example lines '- 0: …', '- 50: …', '- 100: …' (missing {missing})"
        )
    summary = _ANCHOR.sub("", body).strip()
    return Slider(name.lower(), str(title), summary, anchors)


class Personas:
    """The personas and sliders of one memory home."""

    def __init__(self, home: MemoryHome, state: State | None = None) -> None:
        """`state`: where the user's choices live when they are not the home's
        files (the shared database): the active persona and slider values are
        then one document there, over the home's persona files."""
        self.home = home
        self.dir = home.layout.personalities
        self.sliders_dir = home.layout.sliders
        self.state = state

    def _choices(self) -> Choices:
        if self.state is None:
            return {}
        try:
            doc = json.loads(self.state.read(CHOICES))
        except NotFound:
            return {}
        except ValueError as exc:
            raise CorruptFile(f"state/{CHOICES}", f"not valid JSON: {exc}") from exc
        return _valid_choices(doc)

    def _save_choices(self, doc: Choices, op: str) -> None:
        assert self.state is not None
        data = json.dumps(doc, ensure_ascii=False, sort_keys=True).encode("utf-8")
        self.state.write(CHOICES, data, actor=ACTOR, op=op)

    def names(self) -> list[str]:
        if not self.dir.is_dir():
            return []
        return sorted(p.stem for p in self.dir.glob("*.md") if NAME_RE.match(p.stem))

    def path_of(self, name: str) -> Path:
        return self.dir / f"{check_name(name)}.md"

    def load(self, name: str) -> Persona:
        path = self.path_of(name)
        shown = f"personalities/{name}.md"
        if not path.is_file():
            known = ", ".join(self.names()) or "none (run `memagent init`)"
            raise NotFound(f"no persona {name!r} (known: {known})")
        persona = parse_persona(_read(path, shown), shown, path)
        persona.sliders.update(self._choices().get("sliders", {}).get(name, {}))
        return persona

    def sliders(self) -> dict[str, Slider]:
        out: dict[str, Slider] = {}
        if not self.sliders_dir.is_dir():
            return out
        for path in sorted(self.sliders_dir.glob("*.md")):
            if NAME_RE.match(path.stem):
                shown = f"sliders/{path.name}"
                slider = parse_slider(_read(path, shown), shown)
                out[slider.name] = slider
        return out

    def active_name(self) -> str:
        chosen = self._choices().get("active")
        if chosen is not None and NAME_RE.match(chosen):
            return chosen
        return self.home.config.agent.persona

    def active(self) -> Persona:
        return self.load(self.active_name())

    def use(self, name: str) -> Persona:
        """Make `name` the active persona (config `agent.persona`)."""
        persona = self.load(name)
        if self.state is not None:
            self._save_choices({**self._choices(), "active": name}, "persona.use")
            return persona
        self._set_config_persona(name)
        return persona

    def set_slider(self, slider: str, value: int, *, persona: str | None = None) -> Persona:
        """Set one slider of a persona (the active one by default) and save its file."""
        key = check_name(slider, "slider").lower()
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
            raise InvalidInput(f"slider value must be an integer 0-100, got {value!r}")
        known = self.sliders()
        if key not in known:
            raise NotFound(f"no slider {slider!r} (known: {', '.join(known) or 'none'})")
        if self.state is not None:
            name = persona or self.active_name()
            target = self.load(name)
            target.sliders[key] = value
            doc = self._choices()
            sliders = doc.get("sliders", {})
            sliders[name] = {**sliders.get(name, {}), key: value}
            self._save_choices({**doc, "sliders": sliders}, "persona.set")
            return target
        with self.home.storage.lock():
            target = self.load(persona or self.active_name())
            target.sliders[key] = value
            assert target.path is not None
            self.home.storage.write_text(
                target.path,
                render_persona_file(target),
                actor=ACTOR,
                op="persona.set",
                meta={"slider": key, "value": value},
            )
        return target

    def render(self, persona: Persona | None = None) -> str:
        """The persona as system-prompt text: its instruction and its sliders."""
        persona = persona or self.active()
        sliders = self.sliders()
        lines = [persona.body.strip()] if persona.body.strip() else []
        styled = [
            sliders[k].describe(v) if k in sliders else f"{k.capitalize()} {v}/100"
            for k, v in persona.sliders.items()
        ]
        if styled:
            lines.append("Style:\n" + "\n".join(f"- {s}" for s in styled))
        return "\n\n".join(lines)

    def _set_config_persona(self, name: str) -> None:
        storage = self.home.storage
        with storage.lock():
            config: Config = load_config(self.home.layout.config)
            config.agent.persona = name
            storage.write_text(
                self.home.layout.config,
                config.to_toml(),
                actor=ACTOR,
                op="persona.use",
                meta={"persona": name},
            )
        self.home.__dict__.pop("config", None)
