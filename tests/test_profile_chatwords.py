"""Chat spelling read as written English: the pronoun, contractions, chat's days, and
chat's "me" for "my" before a relative or a pet."""

from __future__ import annotations

import pytest

from memagent.memory.profile.chatwords import as_written


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("me sister's gone vegan", "my sister's gone vegan"),
        ("walkin me dogs before work", "walking my dogs before work"),
        ("me other half is coeliac", "my other half is coeliac"),
        ("took me lad to footy", "took my lad to footy"),
        ("Me dog Tyson ate it", "My dog Tyson ate it"),
        ("with me mum at the weekend", "with my mum at the weekend"),
    ],
)
def test_chat_me_before_a_relative_or_a_pet_is_my(said: str, written: str) -> None:
    assert as_written(said) == written


@pytest.mark.parametrize(
    "said",
    [
        "tell me sister stories",  # a verb that takes "me"
        "call me mum",
        "tyson chewed me work boots",  # not a relative or a pet
        "give me a sec",
        "me and my mum",
    ],
)
def test_me_stays_where_it_is_the_writer(said: str) -> None:
    assert as_written(said) == said


def test_the_pronoun_and_contractions_are_written_out() -> None:
    assert as_written("im allergic, cant eat it") == "I'm allergic, can't eat it"


def test_a_huge_line_comes_back_whole() -> None:
    said = "me mum " * 5000
    assert as_written(said) == "my mum " * 5000


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("i hate drivin on motorways", "I hate driving on motorways"),
        ("me cat keeps kippin in the van", "my cat keeps kipping in the van"),
        ("wats a good meal after trainin", "what's a good meal after training"),
        ("can u do the maths", "can you do the maths"),
    ],
)
def test_chat_question_words_and_dropped_gs_are_written_out(said: str, written: str) -> None:
    assert as_written(said) == written


@pytest.mark.parametrize("said", ["Dublin is lovely", "my cousin's cabin", "insulin and protein"])
def test_words_that_end_in_in_are_left_alone(said: str) -> None:
    assert as_written(said) == said


def test_chat_contractions_of_others_are_written_out() -> None:
    assert as_written("shes coeliac n hes vegan, thats why") == (
        "she's coeliac n he's vegan, that's why"
    )
    assert as_written("I feel ill, my id card is lost") == "I feel ill, my id card is lost"
