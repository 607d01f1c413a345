"""`/v1/profile`: structured profile facts — show, apply operations, learn, history."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, Field

from memagent.core.jsontext import JsonObject
from memagent.memory.profile.operations import MAX_BATCH_OPERATIONS, Operation
from memagent.server._admission import RouteClass, admits
from memagent.server._context import CallerDep
from memagent.server._problems import ProblemError

router = APIRouter(prefix="/v1/profile", tags=["profile"])

ResourceName = Annotated[
    str,
    PathParam(
        pattern=r"^[a-z0-9_]{1,64}(\.json)?$",
        description="A resource: user_food_prefs or resource_user_food_prefs.json",
    ),
]


class Profile(BaseModel):
    resources: dict[str, JsonObject] = Field(
        description="Resource file name → its content (expired items left out)."
    )


class ApplyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    operations: list[Operation] = Field(max_length=MAX_BATCH_OPERATIONS)
    dry_run: bool = Field(default=False, description="Check only; write nothing.")


class BatchOutcome(BaseModel):
    model_config = ConfigDict(extra="allow")

    index: int
    operation: str
    status: str
    file: str | None = None
    path: str | None = None
    item: str | None = None
    note: str | None = None


class Applied(BaseModel):
    ok: bool
    batch: str | None
    written: list[str]
    outcomes: list[BatchOutcome]


class LearnRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field(min_length=1, max_length=20_000, description="What the user said.")


class Learned(BaseModel):
    model_config = ConfigDict(extra="allow")

    ok: bool
    facts: list[JsonObject]
    operations: list[JsonObject]
    outcomes: list[BatchOutcome]
    batch: str | None = None
    llm_calls: int = 0


class History(BaseModel):
    item: str
    entries: list[JsonObject]


def _rejected(result: JsonObject) -> ProblemError:
    return ProblemError(
        409,
        f"batch rejected, nothing changed: {result.get('error')}",
        slug="batch-rejected",
        extra={"outcomes": result.get("outcomes", [])},
    )


@router.get("", response_model=Profile, summary="Show every profile resource")
@admits(RouteClass.READ)
def show_all(caller: CallerDep) -> Profile:
    return Profile(resources=caller.memory.profile_show())


@router.get("/history", response_model=History, summary="Changes to one profile item")
@admits(RouteClass.READ)
def item_history(
    caller: CallerDep,
    item: Annotated[str, Query(min_length=1, max_length=200, description="Item key or name.")],
    resource: Annotated[
        str | None, Query(pattern=r"^[a-z0-9_]{1,64}(\.json)?$", description="Only this one.")
    ] = None,
) -> History:
    return History(item=item, entries=caller.memory.profile_history(item, resource=resource))


@router.get("/{resource}", response_model=Profile, summary="Show one profile resource")
@admits(RouteClass.READ)
def show_one(resource: ResourceName, caller: CallerDep) -> Profile:
    return Profile(resources=caller.memory.profile_show(resource))


@router.post(
    "/apply",
    response_model=Applied,
    summary="Apply profile operations (all or nothing)",
)
@admits(RouteClass.WRITE)
def apply(body: ApplyRequest, caller: CallerDep) -> Applied:
    ops = [op.model_dump(mode="json", exclude_none=True) for op in body.operations]
    result = caller.memory.profile_apply(ops, dry_run=body.dry_run)
    if not result["ok"]:
        raise _rejected(result)
    return Applied.model_validate(result)


@router.post(
    "/learn",
    response_model=Learned,
    summary="Learn profile facts from a message (uses the LLM)",
)
@admits(RouteClass.MODEL)
def learn(body: LearnRequest, caller: CallerDep) -> Learned:
    memory = caller.memory
    result = memory.profile_learn(body.text, llm=caller.server.llm(memory.home))
    if not result["ok"]:
        raise _rejected(result)
    return Learned.model_validate(result)
