"""The HTTP API (FastAPI) and MCP server over per-user memory homes.

`create_app(root)` serves every user under a server root; `KeyStore(root)`
manages its API keys (`memagent.api_keys`).
"""

from memagent.api_keys import ApiKey, KeyStore
from memagent.server.app import (
    ServerSettings,
    create_app,
    default_server_root,
    openapi_document,
)

__all__ = [
    "ApiKey",
    "KeyStore",
    "ServerSettings",
    "create_app",
    "default_server_root",
    "openapi_document",
]
