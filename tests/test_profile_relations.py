"""Pets and relatives: one item per name; one-of relations and corrections replace."""

from __future__ import annotations

import pytest

from memagent.memory.profile import relations


def test_keys_hold_the_name_unless_a_person_has_one_of_them() -> None:
    assert relations.key("pet", "cats", "Salt") == "pet_cat_salt"
    assert relations.key("family", "daughters", "Ana") == "family_daughter_ana"
    assert relations.key("family", "children", "Leo") == "family_child_leo"
    assert relations.key("family", "wife", "Priya") == "family_wife"


def test_names_are_split() -> None:
    assert relations.split_names("Ana and Bea") == ["Ana", "Bea"]
    assert relations.split_names("Salt, Pepper & Mustard") == ["Salt", "Pepper", "Mustard"]
    assert relations.split_names("Hana's") == ["Hana"]  # "my sister Hana's wedding"
    assert relations.split_names("Ana\u2019s and Bea") == ["Ana", "Bea"]


def test_a_correction_replaces_and_an_addition_does_not() -> None:
    assert relations.replaces("Actually my dog is called Nova now.")
    assert relations.replaces("My cat's name is Miso, not Mocha.")
    assert not relations.replaces("My son Leo just turned seven.")
    assert not relations.replaces("We now have a second dog, called Nova.")


def test_an_item_from_before_names_were_keys_is_read_as_that_pet() -> None:
    items = [("pet_dog", "Dog named Rex"), ("family_son_leo", "Son: Leo")]
    assert relations.already_named(items, "pet", "dog", "Rex") == "pet_dog"
    assert relations.already_named(items, "pet", "dog", "Nova") is None
    assert relations.already_named(items, "family", "son", "Leo") == "family_son_leo"
    assert relations.same_relation("pet_dog", "pet", "dogs")
    assert not relations.same_relation("pet_dogfish_x", "pet", "dog")


def test_the_words_for_a_child_name_the_relation() -> None:
    assert relations.singular("baby boy") == "son"
    assert relations.singular("Baby girl") == "daughter"


def test_a_pet_told_only_as_someone_elses_is_not_the_writers() -> None:
    said = "client's dog bit the courier. dog is a 4yo staffie called Bruno, never bitten before"
    assert relations.anothers_pet(said)
    assert not relations.anothers_pet("my sister's dog bit me, my own dog Rex is fine")
    assert not relations.anothers_pet("our dog is called Bruno")


def test_the_neighbours_pet_is_theirs_unless_the_writer_names_their_own() -> None:
    assert relations.their_pet("the neighbours cat keeps coming into our garden, he's Pickles")
    assert relations.their_pet("my friend Jonas just got a puppy named Biscotti")
    assert not relations.their_pet("my cat Pixel hates the neighbour's dog")
    assert not relations.their_pet("we adopted a greyhound called Dot")


def test_a_fact_read_as_a_named_relatives_is_theirs() -> None:
    clause = "my mum keeps sending me recipes for liver and onions, she's obsessed lol"
    assert relations.told_of_a_relative("mum", clause)
    assert relations.told_of_a_relative("my mum", clause)
    assert not relations.told_of_a_relative("", clause)
    assert not relations.told_of_a_relative("Sam", "my Sam loves sushi")
    assert not relations.told_of_a_relative("sister", "me and my sister both love sushi")


def test_who_minds_a_pet_is_no_pet() -> None:
    assert relations.minds_pets("dog walker") and relations.minds_pets("cat sitter")
    assert not relations.minds_pets("golden retriever") and not relations.minds_pets("beagle")


def test_the_words_chat_uses_for_a_relative_name_the_relation() -> None:
    assert relations.singular("missus") == "wife" and relations.singular("hubby") == "husband"
    assert relations.singular("nan") == "grandma" and relations.is_relation("other half")


@pytest.mark.parametrize(
    ("value", "clause", "animal"),
    [
        ("tabby", "we have a ginger tabby called Marmalade", True),
        ("rescue", "our rescue Pip is a greyhound", True),
        ("fisherman", "one very loud fisherman. Our secretary Morag quit", False),
        ("secretary", "Our secretary Morag has just stepped down", False),
    ],
)
def test_a_pet_is_an_animal(value: str, clause: str, animal: bool) -> None:
    assert relations.an_animal(value, clause) is animal
