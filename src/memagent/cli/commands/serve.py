"""`memagent serve`: the HTTP API (and MCP over streamable HTTP) for many users."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memagent.cli._common import HomeOption, StoreOption, err_console, home_from_option
from memagent.cli.commands.keys import RootOption
from memagent.core import InvalidInput

if TYPE_CHECKING:
    from memagent.server import ServerSettings


def serve(
    root: RootOption = None,
    home: HomeOption = None,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8765,
    max_body: Annotated[
        int, typer.Option("--max-body", min=1, help="Largest request body, in bytes.")
    ] = 1024 * 1024,
    rate: Annotated[
        float, typer.Option("--rate", min=0.001, help="Requests per second per key (average).")
    ] = 50.0,
    burst: Annotated[int, typer.Option("--burst", min=1, help="Requests per key at once.")] = 100,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.001, help="Seconds before a request gets 504.")
    ] = 30.0,
    no_mcp: Annotated[bool, typer.Option("--no-mcp", help="Do not mount MCP at /mcp.")] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="LLM for profile learning: embedded, openai:NAME, scripted:PATH.json "
            "(default: llm.model of each user's config.toml).",
        ),
    ] = None,
    keyword_only: Annotated[
        bool, typer.Option("--keyword-only", help="Search without embeddings.")
    ] = False,
    store: StoreOption = None,
    per_user: Annotated[
        int,
        typer.Option("--per-user", min=1, help="Requests one user may have in flight (more: 429)."),
    ] = 16,
    max_tokens: Annotated[
        int,
        typer.Option(
            "--max-tokens", min=1, max=32_768, help="Most tokens one reply may ask the model for."
        ),
    ] = 1024,
    in_flight: Annotated[
        list[str] | None,
        typer.Option(
            "--in-flight",
            metavar="CLASS=N",
            help="Server-wide requests in flight for one route class (repeatable): "
            "auth (2), model (4), search (8), write (8), read (12), keyless (4); "
            "together under 40.",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        list[str] | None,
        typer.Option(
            "--forwarded-allow-ips",
            metavar="ADDR",
            help="A proxy whose X-Forwarded-For/-Proto headers are trusted (repeatable; "
            "default none: a client cannot name another address).",
        ),
    ] = None,
    secure_cookies: Annotated[
        bool | None,
        typer.Option(
            "--secure-cookies/--no-secure-cookies",
            help="Web page cookies with Secure and the __Host- prefix (default: on when "
            "--forwarded-allow-ips names a TLS proxy in front).",
        ),
    ] = None,
    head_timeout: Annotated[
        float,
        typer.Option(
            "--head-timeout",
            min=0.1,
            max=600,
            help="Seconds a client has to send a request's head.",
        ),
    ] = 10.0,
    max_connections: Annotated[
        int,
        typer.Option(
            "--max-connections",
            min=8,
            help="Open connections at once (fitted under the descriptor limit).",
        ),
    ] = 4096,
    max_per_client: Annotated[
        int,
        typer.Option("--max-per-client", min=1, help="Open connections from one address."),
    ] = 512,
    as_user: Annotated[
        str | None,
        typer.Option(
            "--as-user",
            help="Serve the memory home itself (--home) as this user's memory: a single-user "
            "server for the memories made with the CLI (keys: keys create --user NAME).",
        ),
    ] = None,
) -> None:
    """Serve every user's memory over HTTP. The server root is --root, else
    <home>/server; each user's memory lives in <root>/users/<user>/, not in the
    home itself (to serve memories made with the CLI, copy that home's files to
    <root>/users/<user>/). With --store postgresql://… every user's memory and the
    keys live in the database, and the root holds only shared/ (settings and
    persona definitions). Keys come from `memagent keys create --user U`."""
    from memagent.server import create_app, default_server_root
    from memagent.server.serving import ConnectionLimits, configure_logging, run_server

    configure_logging()  # before any dependency can put a handler on the root logger

    server_root = default_server_root(root, home)
    served = home_from_option(home) if as_user is not None else None
    settings = _settings(
        in_flight or [],
        max_body_bytes=max_body,
        rate_per_second=rate,
        rate_burst=burst,
        request_timeout_s=timeout,
        mcp=not no_mcp,
        llm=model,
        embeddings=False if keyword_only else None,
        store=store,
        per_user_in_flight=per_user,
        max_tokens=max_tokens,
        secure_cookies=bool(forwarded_allow_ips) if secure_cookies is None else secure_cookies,
    )
    app = create_app(server_root, settings)
    err_console.print(f"memagent serving {server_root} on http://{host}:{port}", highlight=False)
    if served is not None:
        app.state.server.pin_home(as_user, served)
        err_console.print(f"user {as_user}'s memory is the home {served.root}", highlight=False)
    err_console.print(
        f"each user's memory lives in {server_root / 'users'}/<user>/", highlight=False
    )
    if not any(k.active for k in app.state.server.keys.list()):
        err_console.print(
            f"no API keys yet: run `memagent keys create --user NAME --root {server_root}`",
            highlight=False,
        )
    limits = ConnectionLimits(
        head_timeout_s=head_timeout, max_connections=max_connections, max_per_client=max_per_client
    )
    run_server(
        app, host=host, port=port, limits=limits, forwarded_allow_ips=forwarded_allow_ips or []
    )


IN_FLIGHT_FIELDS = {
    "auth": "auth_in_flight",
    "model": "model_in_flight",
    "search": "search_in_flight",
    "write": "write_in_flight",
    "read": "read_in_flight",
    "keyless": "anon_in_flight",
}


def in_flight_caps(specs: list[str]) -> dict[str, int]:
    """`["model=2", …]` as `ServerSettings` fields; a bad one is an `InvalidInput`."""
    caps: dict[str, int] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        field = IN_FLIGHT_FIELDS.get(name.strip().lower())
        if not sep or field is None:
            raise InvalidInput(
                f"--in-flight {spec[:80]!r}: give CLASS=N, CLASS one of "
                + ", ".join(IN_FLIGHT_FIELDS)
            )
        if not value.strip().isdigit():
            raise InvalidInput(f"--in-flight {spec[:80]!r}: N must be a whole number")
        caps[field] = int(value)
    return caps


def _settings(in_flight: list[str], **given: object) -> ServerSettings:
    """The server's settings, checked before anything is written (caps included)."""
    from pydantic import ValidationError

    from memagent.server import ServerSettings
    from memagent.server.app import admission_limits

    try:
        settings = ServerSettings.model_validate({**given, **in_flight_caps(in_flight)})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = next((k for k, f in IN_FLIGHT_FIELDS.items() if (f,) == err["loc"]), None)
        name = f"--in-flight {where}" if where else ".".join(map(str, err["loc"]))
        raise InvalidInput(f"{name}: {err['msg']}") from None
    try:
        admission_limits(settings)
    except ValueError as exc:  # the caps add up to too many
        raise InvalidInput(f"--in-flight: {exc}") from None
    return settings


def openapi(
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write here (e.g. docs/openapi.json); default stdout."),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Print (or write) the HTTP API's OpenAPI document, as served at /openapi.json
    (the same for every home; `--home` is accepted like on every command)."""
    del home
    import json
    import tempfile

    from memagent.server import openapi_document

    with tempfile.TemporaryDirectory() as tmp:
        doc = openapi_document(Path(tmp))
    text = json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
        err_console.print(f"wrote {out}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(openapi)
