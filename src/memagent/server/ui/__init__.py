"""The web page: see, search and fix what the assistant remembers.

Server-rendered (Jinja2) with htmx for small in-page updates; every page reads
without JavaScript. `mount_ui(app)` adds it at `/ui` to the HTTP server
(sign-in with an API key); `memagent.server.local_ui.local_app(home)` is
`memagent ui`: one memory home, loopback only, signed in by a one-time token in
the printed URL.
"""

from memagent.server.ui._app import LOCAL_USER, mount_ui
from memagent.server.ui._session import UiState

__all__ = ["LOCAL_USER", "UiState", "mount_ui"]
