"""Whose fact a sentence states: a relative named as a place leaves the writer the
subject; a named person, another person's someone or a thing as the subject does not."""

from __future__ import annotations

import pytest

from memagent.memory.profile.subjects import (
    about_no_one,
    about_someone_else,
    led_by_a_name,
    said_of_them,
    their_subject,
)


@pytest.mark.parametrize(
    ("clause", "other"),
    [
        ("Staying at my sister's in Leeds until the 20th", False),
        ("Working from my parents' place in Galway for a fortnight", False),
        ("in Seoul until the 5th for my cousin's wedding", False),
        ("my sister is in Leeds this week", True),
        ("Staying with my aunt up in Aberfeldy this week.", False),
        ("Dave from the climbing gym is lactose intolerant.", True),
    ],
)
def test_a_relative_named_as_a_place(clause: str, other: bool) -> None:
    assert about_someone_else(clause, "whereabouts") is other


@pytest.mark.parametrize(
    ("clause", "other"),
    [
        ("Anneliese from book club only eats raw food now.", True),  # an adverb before the verb
        ("Priya always takes the stairs.", True),
        ("Wrenna's teacher, Mrs Okonkwo-Hale, is vegan and keeps bees.", True),
        ("Tom's dad eats no meat.", True),
        ("Only eat raw food now.", False),
        ("Vegan since 2019, never looked back.", False),
    ],
)
def test_a_named_person_with_an_adverb(clause: str, other: bool) -> None:
    assert about_someone_else(clause, "food_like") is other


@pytest.mark.parametrize(
    ("part", "theirs"),
    [
        ("my neighbour plays drums at midnight", True),
        ("now she judges my bagels", True),
        ("my sister's wedding is on 12 June", False),  # a possessive: not the subject
        ("my husband and I love hiking", False),
        ("I love my neighbour's dog", False),
        ("my charge nurse is coeliac and she never stops moaning", True),  # a role, one word before
        ("the kids eat normal bread though", True),  # "the" for one's own
        ("the wife is vegan", True),
        ("The vicar's wife makes the best lemon drizzle in Yorkshire", True),  # someone's someone
        ("and also that he takes insulin", True),  # after "that"
        ("my nurse friend swears by it", True),
        ("my sister's place is in Leeds", False),
        ("my new job is great", False),
        ("the best pizza is in Naples", False),
        ("my mum and I love tea", False),
        ("my dog hates baths", False),  # a pet's is the profile's, as a pet
        ("my girlfriend's not vegan though", True),  # "'s" as "is"
        ("my husband's allergic to cats", True),
        ("my mum's birthday is friday", False),  # "'s" as whose
        ("both hate the vet with a passion", True),  # two cats named before
    ],
)
def test_their_subject(part: str, theirs: bool) -> None:
    assert their_subject(part) is theirs


def test_home_said_as_the_subject_is_the_writers() -> None:
    assert not about_someone_else("Home is Loughborough.", "home")
    assert about_someone_else("Home is Loughborough.", "food_like")  # only a home is read there


@pytest.mark.parametrize(
    ("clause", "no_one"),
    [
        ("The kids next door have a new puppy.", True),
        ("The weather in Oslo is terrible", True),
        ("Peanuts are legumes", True),
        ("Latex allergy here", False),  # no subject: the writer's
        ("Shellfish is my weakness", False),
        ("We finally adopted a cat", False),
    ],
)
def test_about_no_one(clause: str, no_one: bool) -> None:
    assert about_no_one(clause) is no_one


@pytest.mark.parametrize(
    ("clause", "kind", "other"),
    [
        ("beer is gross idc what anyone says", "drink_dislike", False),
        ("Dark roast coffee is life", "drink_like", False),
        ("my sister says beer is gross", "drink_dislike", True),
        ("Peanuts are legumes", "food_like", True),  # no verdict on a taste
        ("The weather in Oslo is the best", "like", True),  # only food and drink
    ],
)
def test_a_verdict_on_a_taste_is_the_writers(clause: str, kind: str, other: bool) -> None:
    assert about_someone_else(clause, kind) is other


@pytest.mark.parametrize(
    ("clause", "kind", "other"),
    [
        ("friday nights are pizza and movie night with the kids", "routine_weekly", False),
        ("thursday nights are pottery class", "routine_weekly", False),
        ("Visiting my son in Melbourne until May 3rd", "whereabouts", False),
        ("my son is in Melbourne until May 3rd", "whereabouts", True),
    ],
)
def test_a_time_as_the_subject_or_a_visit_leaves_the_writer_the_subject(
    clause: str, kind: str, other: bool
) -> None:
    assert about_someone_else(clause, kind) is other


def test_she_is_a_subject_and_my_sisters_is_not() -> None:
    assert their_subject("she's just had surgery")
    assert not their_subject("my sister's wedding is on 12 June")


def test_they_after_an_aside_is_their_subject() -> None:
    assert their_subject("apparently in iceland they eat fermented shark")
    assert not their_subject("apparently I eat like a bird")


@pytest.mark.parametrize(
    ("part", "theirs"),
    [
        ("lena went vegan last month", True),
        ("Lena's just started keto", True),
        ("I went vegan last month", False),
        ("lemons are great", False),
    ],
)
def test_a_part_led_by_a_held_name_is_theirs(part: str, theirs: bool) -> None:
    assert led_by_a_name(part, {"lena"}) is theirs


@pytest.mark.parametrize(
    ("part", "theirs"),
    [
        ("she also hates garlic which is basically everything i cook lol", True),
        ("my wife hates garlic so I never cook with it", True),
        ("she and I both love sushi", False),
        ("they know I hate garlic", False),
    ],
)
def test_a_first_person_in_a_clause_after_the_subject_leaves_it_theirs(
    part: str, theirs: bool
) -> None:
    assert their_subject(part) is theirs


@pytest.mark.parametrize(
    ("value", "clause", "theirs"),
    [
        ("gluten free", "my mate Priya told me she's moving 😭 she's gluten free and happy", True),
        ("vegan", "they are both vegan now", True),
        ("vegan", "she told me I'm vegan now", False),
        ("gluten free", "I'm gluten free", False),
        ("Royal", "her name is Jenna, she lives on Elm Road, works nights at the Royal", True),
        ("Leeds", "she lives in Bath, and I work in Leeds", False),
        ("nurse", "she visits sometimes, I work as a nurse", False),
    ],
)
def test_a_value_after_he_she_or_they_is_theirs(value: str, clause: str, theirs: bool) -> None:
    assert said_of_them(value, clause) is theirs


@pytest.mark.parametrize(
    ("clause", "other"),
    [
        ("lookin after my gran at hers in Kilkenny till sunday while my aunt's away", False),
        ("goin home to manila to see my mum", False),
        ("visiting my dad in Leeds till friday", False),
        ("nothing my sister eats is spicy", True),  # "-ing" that is no verb
        ("my mum is in Manila till friday", True),
    ],
)
def test_a_clause_that_opens_with_its_verb_is_the_writer_s(clause: str, other: bool) -> None:
    assert about_someone_else(clause, "whereabouts") is other


def test_a_clause_opened_by_so_is_read_past_the_so() -> None:
    assert not their_subject("So she's taken me off amlodipine completely")
    assert their_subject("So she's gone vegan")


@pytest.mark.parametrize(
    "part",
    [
        "my sister's gone vegan",
        "my other half's just been told she's coeliac",
        "the missus is off dairy",
    ],
)
def test_a_relative_s_news_is_theirs(part: str) -> None:
    assert their_subject(part)


def test_a_relative_s_thing_is_not_their_subject() -> None:
    assert not their_subject("my sister's wedding is on the 14th and I'm a bridesmaid")


def test_a_named_child_s_allergy_is_hers() -> None:
    clause = "one of them, a little girl called Zainab, has a severe nut allergy, her mum told me"
    assert said_of_them("nut", clause)
    assert not said_of_them("asthma", "Honestly I have asthma")


def test_an_adverb_before_got_is_no_one_else() -> None:
    clause = "Finally got a physio appointment for my shoulder, Tuesday 3 November"
    assert not said_of_them("physio", clause)
