"""The action registry: each vault action is declared once, and everything that
needs to know the actions reads them from here.

    @action(ReadFile, reads=("file:path", "names"))
    def read_file(vault: Vault, *, path: str) -> str:
        '''The text of a file in the vault.'''  # what Python-mode code is told
        return vault.read(path)

The model (`ReadFile`, a `BaseAction` with its `action` literal, fields,
docstring and example) is the JSON form; the function, called with the
model's fields as keyword arguments (every `$var` resolved), is what runs; the
templates say what it reads and writes. From these come the `Action` union and
its JSON Schema, the parser's table of models, the plan steps and their
resources, the sandbox functions of Python mode and the agent's notion of a
write. Rollback needs nothing: the journal wraps the vault's storage hooks.

Resource templates (`resources_of` turns them into plan resources):
- `file:FIELD`: the file named by that field;
- `tree:FIELD`: that entry and everything under it (a folder);
- `walk:FIELD`: as `tree`, for an action that walks the folder and follows
  links, so what it sees may live anywhere: its plan step reads the whole vault;
- `vault`: everything;
- `names`: the set of names in the vault (read by an action that may answer
  "did you mean …?", written by one that adds or removes a name).

`action` checks the declaration when the module is imported: the function is
named as the action, its keyword-only parameters are the model's fields in the
same order with the same defaults, and every template names a field.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_type_hints

from pydantic import ConfigDict, validate_call

from memagent.actions._models import NOT_ARGUMENTS, BaseAction

_VALIDATE = ConfigDict(arbitrary_types_allowed=True, strict=True)
PATH_KINDS = ("file", "tree", "walk")
NAMES = "names"
WHOLE = "vault"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ActionSpec:
    """One declared action: its name, model, validated function and resources.

    `reads`/`writes` are the templates of the module docstring.
    """

    name: str
    func: Callable[..., Any]
    model: type[BaseAction]
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    doc: str = ""
    """What Python-mode code is told the function does (the function's docstring)."""
    parameters: tuple[inspect.Parameter, ...] = field(default=(), repr=False)
    """The arguments, positional-or-keyword in the model's field order, with
    resolved type hints (the signature of the sandbox function)."""

    @property
    def changes(self) -> bool:
        """Whether the action may change the vault (a batch holding one is a write)."""
        return any(t != NAMES for t in self.writes)

    @property
    def walks(self) -> bool:
        """Whether it follows links while walking (its step reads the whole vault)."""
        return any(t.startswith("walk:") for t in self.reads)

    @property
    def reads_names(self) -> bool:
        return NAMES in self.reads

    @property
    def writes_names(self) -> bool:
        return NAMES in self.writes


REGISTRY: dict[str, ActionSpec] = {}
"""Every declared action by name, in declaration order (the order of the union,
the JSON Schema, the sandbox functions and the lists shown to the model)."""


def action_name(model: type[BaseAction]) -> str:
    """The `action` literal of a model."""
    annotation = model.model_fields["action"].annotation
    args: tuple[object, ...] = getattr(annotation, "__args__", ())
    name = args[0] if len(args) == 1 else None
    if not isinstance(name, str):
        raise TypeError(f"{model.__name__}.action must be a Literal of one name")
    return name


def _check_template(name: str, template: str, fields: list[str]) -> None:
    if template in (NAMES, WHOLE):
        return
    kind, _, field_name = template.partition(":")
    if kind not in PATH_KINDS or field_name not in fields:
        raise TypeError(
            f"action {name}: resource {template!r} is not one of names, vault, "
            f"file:FIELD, tree:FIELD, walk:FIELD with FIELD in {fields}"
        )


def _parameters(name: str, func: Callable[..., Any], model: type[BaseAction]) -> list[Any]:
    """The function's arguments as the sandbox function takes them, after checking
    that they are the model's fields (names, order, defaults)."""
    fields = [f for f in model.model_fields if f not in NOT_ARGUMENTS]
    params = list(inspect.signature(func).parameters.values())
    if not params or params[0].kind is inspect.Parameter.KEYWORD_ONLY:
        raise TypeError(f"action {name}: the first parameter takes the vault")
    args = params[1:]
    if [p.name for p in args] != fields or any(p.kind is not p.KEYWORD_ONLY for p in args):
        raise TypeError(
            f"action {name}: after the vault, the function takes the fields {fields} "
            f"as keyword-only parameters, in that order"
        )
    hints = get_type_hints(func)
    out = []
    for p in args:
        default = model.model_fields[p.name].default if p.default is not p.empty else p.empty
        if p.default is not p.empty and p.default != default:
            raise TypeError(f"action {name}: {p.name} defaults to {p.default!r}, not {default!r}")
        if p.default is p.empty and not model.model_fields[p.name].is_required():
            raise TypeError(f"action {name}: {p.name} has a default in the model only")
        out.append(p.replace(kind=p.POSITIONAL_OR_KEYWORD, annotation=hints.get(p.name, p.empty)))
    return out


def action(
    model: type[BaseAction], *, reads: tuple[str, ...] = (), writes: tuple[str, ...] = ()
) -> Callable[[F], F]:
    """Declare `model`'s action: the decorated function runs it (see the module
    docstring). Returns the function with its arguments validated strictly."""
    name = action_name(model)

    def register(func: F) -> F:
        if func.__name__ != name:
            raise TypeError(f"the function of action {name!r} is named {func.__name__!r}")
        if name in REGISTRY:
            raise TypeError(f"action {name!r} is declared twice")
        fields = [f for f in model.model_fields if f not in NOT_ARGUMENTS]
        for template in (*reads, *writes):
            _check_template(name, template, fields)
        parameters = tuple(_parameters(name, func, model))
        validated: F = validate_call(config=_VALIDATE)(func)
        doc = inspect.cleandoc(func.__doc__ or model.__doc__ or name)
        REGISTRY[name] = ActionSpec(name, validated, model, reads, writes, doc, parameters)
        return validated

    return register
