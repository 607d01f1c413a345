"""Key management over HTTP (admin keys only) and `GET /v1/me`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status
from pydantic import BaseModel, ConfigDict, Field

from memagent.api_keys import USER_RE, ApiKey
from memagent.server._admission import RouteClass, admits
from memagent.server._context import AdminDep, CallerDep

router = APIRouter(tags=["keys"])

KeyId = Annotated[str, Path(pattern=r"^[0-9a-f]{12}$", description="The key's id.")]


class KeyInfo(BaseModel):
    """A key as listed: everything but its hash."""

    id: str
    user: str | None
    admin: bool
    label: str | None
    created: str
    revoked: str | None
    last_used: str | None = None

    @classmethod
    def of(cls, key: ApiKey) -> KeyInfo:
        return cls.model_validate(key.model_dump(exclude={"hash"}))


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    user: str | None = Field(default=None, pattern=USER_RE.pattern)
    admin: bool = False
    label: str | None = Field(default=None, max_length=200)


class KeyCreated(KeyInfo):
    key: str = Field(description="The new key. It is shown once and never stored.")


class KeyList(BaseModel):
    keys: list[KeyInfo]


class Me(BaseModel):
    user: str | None
    key_id: str
    admin: bool


@router.get("/v1/me", response_model=Me, summary="Who this key is")
@admits(RouteClass.META)
async def me(caller: CallerDep) -> Me:
    return Me(user=caller.key.user, key_id=caller.key.id, admin=caller.key.admin)


@router.get("/v1/admin/keys", response_model=KeyList, summary="List API keys")
@admits(RouteClass.AUTH)
def list_keys(caller: AdminDep) -> KeyList:
    return KeyList(keys=[KeyInfo.of(k) for k in caller.server.keys.list()])


@router.post(
    "/v1/admin/keys",
    response_model=KeyCreated,
    status_code=status.HTTP_201_CREATED,
    summary="Create an API key",
)
@admits(RouteClass.AUTH)
def create_key(body: KeyCreate, caller: AdminDep) -> KeyCreated:
    key, record = caller.server.keys.create(user=body.user, admin=body.admin, label=body.label)
    return KeyCreated(key=key, **KeyInfo.of(record).model_dump())


@router.delete("/v1/admin/keys/{key_id}", response_model=KeyInfo, summary="Revoke an API key")
@admits(RouteClass.AUTH)
def revoke_key(key_id: KeyId, caller: AdminDep) -> KeyInfo:
    return KeyInfo.of(caller.server.keys.revoke(key_id))
