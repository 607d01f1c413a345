"""A job's line (`memory.profile.jobs`): the role with its employer when the model
copied only one of them."""

from __future__ import annotations

import pytest

from memagent.memory.profile.jobs import job, job_said

PLAIN = "Works as {v}"


@pytest.mark.parametrize(
    ("value", "clause", "line"),
    [
        (
            "a fintech startup",
            "I'm a software engineer at a fintech startup",
            ("software engineer at a fintech startup", "Works as {v}"),
        ),
        ("Spotify", "I work at Spotify as a data analyst", ("data analyst at Spotify", PLAIN)),
        ("Spotify", "I work at Spotify", ("Spotify", "Works at {v}")),
        ("retired", "I'm retired now", ("retired", "{V}")),
        ("nurse", "I'm a nurse", ("nurse", PLAIN)),
    ],
)
def test_job(value: str, clause: str, line: tuple[str, str]) -> None:
    assert job(value, clause, PLAIN) == line


def test_work_said_with_its_shifts_is_the_employer() -> None:
    assert job("bakery", "i work earlies at a bakery", PLAIN) == ("bakery", "Works at {v}")


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("I'm a decent cook but I've never made anything Portuguese", None),
        ("I'm a nervous driver", None),
        ("I'm a bus driver", "bus driver"),
        ("I'm a pastry chef", "pastry chef"),
    ],
)
def test_a_skill_is_no_job(sentence: str, said: str | None) -> None:
    assert job_said(sentence) == said
