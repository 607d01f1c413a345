"""Command-line interface (Typer + Rich)."""

from memagent.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
