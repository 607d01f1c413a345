"""Arbitrary text and arbitrary small programs never crash the interpreter:
every run ends with a RunResult, and errors are strings shaped like Python's."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memagent.sandbox import Limits, Session

LIMITS = Limits(max_operations=20_000, timeout_s=1.0)

_ATOMS = st.sampled_from(
    [
        "x",
        "1",
        "'s'",
        "[]",
        "{}",
        "()",
        "None",
        "len",
        "print",
        "range(3)",
        "x.y",
        "x[0]",
        "-1",
        "2**8",
        "'%s' % x",
        "f'{x}'",
        "lambda: x",
        "str",
        "type(x)",
    ]
)
_OPS = st.sampled_from(["+", "*", "-", "/", "//", "%", "==", "<", " and ", " or ", " in "])


@st.composite
def programs(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        a, op, b = draw(_ATOMS), draw(_OPS), draw(_ATOMS)
        kind = draw(st.integers(0, 3))
        if kind == 0:
            lines.append(f"x = {a}{op}{b}")
        elif kind == 1:
            lines.append(f"for i in {a}:\n    x = i{op}{b}")
        elif kind == 2:
            lines.append(f"try:\n    x = {a}({b})\nexcept Exception as e:\n    x = str(e)")
        else:
            lines.append(f"{a}{op}{b}")
    return "x = 0\n" + "\n".join(lines)


def _check(code: str) -> None:
    r = Session(limits=LIMITS).run(code)
    assert isinstance(r.output, str)
    if r.error is not None:
        assert ":" in r.error or r.error.isidentifier()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_never_crash(code: str) -> None:
    _check(code)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes(code: str) -> None:
    _check(code)
