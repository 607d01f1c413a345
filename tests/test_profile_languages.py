"""A "language" fact names a language people speak (`memory.profile.languages`)."""

from __future__ import annotations

import pytest

from memagent.memory.profile.languages import is_spoken


@pytest.mark.parametrize(
    ("value", "spoken"),
    [
        ("Spanish", True),
        ("fluent German", True),
        ("a bit of Mandarin", True),
        ("BSL", True),
        ("Go", False),
        ("Postgres", False),
        ("TypeScript", False),
        ("code", False),
        ("", False),
        ("x" * 10_000, False),
    ],
)
def test_is_spoken(value: str, spoken: bool) -> None:
    assert is_spoken(value) is spoken
