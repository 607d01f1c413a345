"""A held line's day or time put in place by the one a statement says
(`memory.profile.retime`): one new day, part of the day or clock time, else nothing."""

from __future__ import annotations

import pytest

from memagent.memory.profile.retime import moved_line


@pytest.mark.parametrize(
    ("line", "statement", "now"),
    [
        (
            "I sing in a choir on Tuesdays",
            "Choir's moved to wednesday nights this term, the church hall got double booked",
            "I sing in a choir on Wednesday nights",
        ),
        ("Pilates on Mondays", "pilates switched to thursdays", "Pilates on Thursdays"),
        (  # the line's number: "every" one morning
            "I have swimming lessons every saturday",
            "Swimming lessons have moved to Sunday mornings from this term",
            "I have swimming lessons every Sunday morning",
        ),
        (
            "I run every Saturday morning",
            "parkrun's on sundays now instead of saturday",
            "I run every Sunday morning",
        ),
        (
            "Five-a-side on Thursday evenings",
            "they've moved five-a-side to tuesday evenings",
            "Five-a-side on Tuesday evenings",
        ),
        (
            "Swim every morning at 7",
            "my swim is at 6 now, the pool changed its hours",
            "Swim every morning at 6",
        ),
        ("Swim at 7", "swim's 3 times a week now", None),
        ("Swim every morning at 7am", "swim's at 6.30am now", "Swim every morning at 6.30am"),
        ("I run every morning", "switched my runs to the evenings", "I run every evening"),
        ("Yoga on Tuesdays and Thursdays", "yoga moved to mondays", None),
        ("Book club on Mondays", "book club moved to wednesdays and fridays", None),
        ("Book club monthly", "book club moved to wednesdays", None),
        ("Pilates on Mondays", "pilates moved, not sure when yet", None),
        ("Pilates on Mondays", "pilates moved to the 40th " * 500, None),
        ("Lunch at 1pm", "lunch is at 12.30pm now", "Lunch at 12.30pm"),
    ],
)
def test_moved_line(line: str, statement: str, now: str | None) -> None:
    assert moved_line(line, statement) == now


def test_the_moved_line_of_a_line_with_an_end_day_leaves_it_out() -> None:
    assert moved_line("Dentist on Friday (until Fri 2026-03-06)", "dentist moved to monday") == (
        "Dentist on Monday"
    )
