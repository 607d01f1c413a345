"""The routers `create_app` mounts, one module per resource."""

from fastapi import APIRouter

from memagent.server.routes import admin, chat, memories, notes, profile

ROUTERS: list[APIRouter] = [
    admin.router,
    memories.router,
    notes.router,
    profile.router,
    chat.router,
]
