"""One module per command family; each defines `register(app: typer.Typer)`."""
