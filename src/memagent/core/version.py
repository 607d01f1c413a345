"""The package version, where every layer may read it (pyproject.toml has the same)."""

__version__ = "0.1.0"
