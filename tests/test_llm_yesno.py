"""Yes/no verdicts from token probabilities (`memagent.llm.yesno`) and the scripted
model's verdicts."""

from __future__ import annotations

import math

import pytest

from memagent.llm import LLMError, ScriptedLLM
from memagent.llm.yesno import (
    YesNoJudge,
    ask_yes_no,
    parse_probability,
    verdict_schema,
    yes_share,
)


def test_yes_share_sums_the_spellings_of_each_word() -> None:
    top = [("Yes", math.log(0.5)), (" yes", math.log(0.1)), ("No", math.log(0.3)),
           ("NO.", math.log(0.1)), ("Maybe", math.log(0.2))]  # fmt: skip
    assert yes_share(top) == pytest.approx(0.6 / 1.0)
    assert yes_share([("no", 0.0)]) == 0.0 and yes_share([("YES", -3.0)]) == 1.0


@pytest.mark.parametrize(
    "top",
    [
        [],
        [("Maybe", -0.1), ("The", -1.0)],  # the model meant to say something else
        [("yes", float("nan")), ("no", float("inf"))],  # no usable probability
    ],
)
def test_no_verdict_is_an_error(top: list[tuple[str, float]]) -> None:
    with pytest.raises(LLMError, match="neither yes nor no"):
        yes_share(top)


def test_malformed_probabilities_are_an_error() -> None:
    with pytest.raises(LLMError, match="malformed"):
        yes_share([("yes", "high")])  # type: ignore[list-item]
    with pytest.raises(LLMError, match="malformed"):
        yes_share([(None, -0.1)])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("text", "p"), [("yes", 1.0), (" No. ", 0.0), ("YES!", 1.0), ("0.25", 0.25), ("1", 1.0)]
)
def test_parse_probability(text: str, p: float) -> None:
    assert parse_probability(text) == p


@pytest.mark.parametrize("text", ["maybe", "", "1.5", "-0.1", "nan", "yes" * 10_000])
def test_parse_probability_refuses_anything_else(text: str) -> None:
    with pytest.raises(LLMError):
        parse_probability(text)


def test_scripted_verdicts_are_apart_from_replies() -> None:
    llm = ScriptedLLM(["an answer"], verdicts=["no", "0.7", "perhaps"])
    assert isinstance(llm, YesNoJudge)
    first = llm.yes_probability([{"role": "user", "content": "Is it? yes or no"}])
    assert first.p_yes == 0.0 and first.usage is not None
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (5, 1)  # words
    assert llm.chat([{"role": "user", "content": "Q"}]).text == "an answer"
    assert llm.yes_probability([{"role": "user", "content": "Again?"}]).p_yes == 0.7
    with pytest.raises(LLMError, match="yes, no or a probability"):
        llm.yes_probability([{"role": "user", "content": "And?"}])
    with pytest.raises(LLMError, match="no yes/no verdict left"):
        llm.yes_probability([{"role": "user", "content": "More?"}])
    assert [c.messages[0].content for c in llm.calls][:2] == ["Is it? yes or no", "Q"]
    with pytest.raises(LLMError, match="no yes/no verdict left"):
        ScriptedLLM(["x"]).yes_probability([{"role": "user", "content": "Q"}])


def test_p_yes_of_takes_only_a_probability() -> None:
    """The one check both the grounding check and profile revision read a judge's
    answer through: a `YesNo` or a bare number in [0, 1], never a bool or NaN."""
    from memagent.llm.yesno import YesNo, p_yes_of

    assert p_yes_of(YesNo(0.3)) == 0.3 and p_yes_of(1) == 1.0 and p_yes_of(0.0) == 0.0
    for bad in (True, False, float("nan"), float("inf"), 1.5, -0.1, "0.5", None, YesNo(2.0)):
        assert p_yes_of(bad) is None, bad


def test_ask_yes_no_reads_probabilities_then_the_constrained_reply() -> None:
    asked = [{"role": "user", "content": "Is it so? Answer yes or no."}]
    assert ask_yes_no(ScriptedLLM([], verdicts=["0.3"]), asked, "holds") == 0.3
    # no probability: the grammar-constrained reply under the given key
    llm = ScriptedLLM(['{"holds": "no"}'], verdicts=[])
    assert ask_yes_no(llm, asked, "holds") == 0.0
    assert llm.calls[-1].response_schema == verdict_schema("holds")
    for broken in ('{"ended": "yes"}', '{"holds": "maybe"}', "yes", '["yes"]', ""):
        assert ask_yes_no(ScriptedLLM([broken], verdicts=[]), asked, "holds") is None
    assert ask_yes_no(ScriptedLLM([], verdicts=[]), asked, "holds") is None  # the model failed
