"""Changes a statement makes to what the profile holds, read by rule even when the
model reads nothing: a pet or person gone, a name corrected, a job ended, answers of
the other length, sober, one thing in another's place. (Stays: test_profile_stays.)
Fixed dates, no model."""

from __future__ import annotations

from datetime import date

import pytest

from memagent.core import MemoryHome
from memagent.memory.profile.changes import RELATION_OVER, relation_over
from profile_support import said_on as said

WED = date(2026, 3, 4)
THU = date(2026, 5, 14)


@pytest.mark.parametrize(
    "text",
    [
        "Maya and I broke up last month",
        "Maya is no longer my girlfriend, we split up",
        "Maya isn't my girlfriend any more",
        "Maya and I divorced last fall",
    ],
)
def test_a_partner_gone_is_removed_with_nothing_read(home: MemoryHome, text: str) -> None:
    said(home, "My girlfriend is called Maya.", ("family", "girlfriend", "Maya"))
    assert said(home, text) == []


def test_a_partner_gone_is_removed_when_the_model_reads_them_again(home: MemoryHome) -> None:
    said(home, "My girlfriend is called Sam.", ("family", "girlfriend", "Sam"))
    text = "Sam is no longer my girlfriend, we split up last month, it was mutual"
    assert said(home, text, ("family", "girlfriend", "Sam")) == []


def test_someone_never_stored_who_is_gone_is_not_added(home: MemoryHome) -> None:
    assert said(home, "Raj is no longer my husband", ("family", "husband", "Raj")) == []


def test_a_pet_put_down_goes_by_name_and_the_other_stays(home: MemoryHome) -> None:
    said(home, "My dog is called Biscuit.", ("pet", "dog", "Biscuit"))
    said(home, "My cat is called Miso.", ("pet", "cat", "Miso"))
    got = said(home, "we had to put our old dog Biscuit down on sunday")
    assert got == ["personal.facts: Cat named Miso"]


def test_a_pet_gone_by_its_relation_only_when_there_is_one(home: MemoryHome) -> None:
    said(home, "I have two dogs, Rex and Bo.", ("pet", "dog", "Rex"), ("pet", "dog", "Bo"))
    assert len(said(home, "our dog died last week")) == 2  # which one: not said


def test_news_of_a_partner_that_ends_nothing(home: MemoryHome) -> None:
    said(home, "My girlfriend is called Maya.", ("family", "girlfriend", "Maya"))
    assert said(home, "Maya got a new job, I'm so proud") == ["personal.facts: Girlfriend: Maya"]


@pytest.mark.parametrize(
    ("text", "over"),
    [
        ("Sam is no longer my girlfriend", True),
        ("we had to put Biscuit down", True),
        ("Biscuit passed away", True),
        ("Biscuit is not my dog's name", False),
        ("Biscuit sat down", False),
    ],
)
def test_relation_over(text: str, over: bool) -> None:
    assert relation_over("Biscuit" if "Biscuit" in text else "Sam", "dog", text) is over
    if over:
        assert RELATION_OVER.search(text)


def test_a_pet_renamed_with_nothing_read(home: MemoryHome) -> None:
    said(home, "We got a puppy called Rocket.", ("pet", "puppy", "Rocket"))
    got = said(home, "we ended up renaming him Comet, Rocket just didn't suit him")
    assert got == ["personal.facts: Puppy named Comet"]


def test_i_meant_the_new_name_not_the_old(home: MemoryHome) -> None:
    said(home, "My dog is called Ziggy.", ("pet", "dog", "Ziggy"))
    assert said(home, "oops autocorrect, I meant Iggy not Ziggy") == [
        "personal.facts: Dog named Iggy"
    ]


def test_a_partner_renamed_keeps_one_item(home: MemoryHome) -> None:
    said(home, "My wife is called Ana.", ("family", "wife", "Ana"))
    assert said(home, "sorry, Anna, not Ana") == ["personal.facts: Wife: Anna"]


def test_a_rename_naming_no_one_stored_changes_nothing(home: MemoryHome) -> None:
    said(home, "My dog is called Rex.", ("pet", "dog", "Rex"))
    assert said(home, "It's Paris, not London") == ["personal.facts: Dog named Rex"]


def test_a_job_said_to_be_over_is_removed_and_never_added(home: MemoryHome) -> None:
    text = "I don't work at google anymore, got laid off friday so job hunting now"
    assert said(home, text, ("work", "google", "")) == []
    said(home, "I work at Google.", ("work", "Google", ""))
    assert said(home, text, ("work", "google", "")) == []


def test_retired_replaces_the_job(home: MemoryHome) -> None:
    said(home, "I'm an accountant.", ("work", "accountant", ""))
    assert said(home, "I retired in January", ("work", "retired", "")) == [
        "personal.facts: Retired"
    ]


def test_more_detail_ends_short_answers(home: MemoryHome) -> None:
    said(home, "Keep your answers short.", ("communication", "short answers", ""))
    got = said(
        home,
        "you can go into more detail now, the short answers were a bit too short tbh",
        ("communication", "detail", ""),
        ("communication", "short answers", ""),
    )
    assert len(got) == 1 and "detail" in got[0]


def test_quitting_drinking_ends_alcohol_not_coffee(home: MemoryHome) -> None:
    said(home, "I love beer.", ("drink_like", "beer", ""))
    said(home, "I love coffee.", ("drink_like", "coffee", ""))
    got = said(home, "I've quit drinking altogether, 6 months sober now 💪")
    assert got == ["drink.likes: Likes coffee"]


def test_quitting_drinking_coffee_leaves_beer(home: MemoryHome) -> None:
    said(home, "I love beer.", ("drink_like", "beer", ""))
    said(home, "I love coffee.", ("drink_like", "coffee", ""))
    assert said(home, "I quit drinking coffee") == ["drink.likes: Likes beer"]


def test_a_thing_put_in_place_of_a_stored_one_when_the_model_reads_only_the_old(
    home: MemoryHome,
) -> None:
    said(home, "I'm allergic to strawberries.", ("allergy", "strawberries", ""))
    got = said(
        home,
        "sorry, raspberries, not strawberries. strawberries are fine",
        ("food_dislike", "strawberries", ""),
    )
    assert got == ["health.allergies: Allergic to raspberries"]


@pytest.mark.parametrize(
    "text",
    [
        "Correction to my notes: it isn't latex I react to, it's nickel.",
        "It's not latex, it's nickel.",
        "it is not the latex, it's the nickel",
    ],
)
def test_it_isnt_y_its_x_puts_x_in_ys_place(home: MemoryHome, text: str) -> None:
    said(home, "I'm allergic to latex.", ("allergy", "latex", ""))
    assert said(home, text) == ["health.allergies: Allergic to nickel"]


@pytest.mark.parametrize(
    ("held", "text"),
    [
        (("diet", "vegan", ""), "It isn't easy being vegan, but it's worth it."),
        (("drink_like", "coffee", ""), "It wasn't the coffee that kept me up, it was the tea."),
    ],
)
def test_a_contrast_that_corrects_nothing_held_takes_nothing_back(
    home: MemoryHome, held: tuple[str, str, str], text: str
) -> None:
    before = said(home, f"I like {held[1]}.", held)
    assert said(home, text) == before


def test_x_not_y_with_nothing_stored_adds_nothing(home: MemoryHome) -> None:
    assert said(home, "sorry, raspberries, not strawberries") == []


def test_stopped_the_medicine(home: MemoryHome) -> None:
    said(home, "I take ibuprofen.", ("medication", "ibuprofen", ""))
    assert said(home, "stopped the ibuprofen, my stomach couldn't handle it") == []


@pytest.mark.parametrize(
    "text",
    [
        "I don't work at google anymore, got laid off friday so job hunting now",
        "got laid off last week",
        "I quit my job!",
        "quit the coffee shop last week, living off savings for now",
        "resigned from the firm, last day was friday",
    ],
)
def test_a_job_ended_with_nothing_read(home: MemoryHome, text: str) -> None:
    said(home, "I work at Google.", ("work", "Google", ""))
    assert said(home, text) == []


def test_leaving_the_office_for_the_day_is_no_job_ended(home: MemoryHome) -> None:
    said(home, "I work at Google.", ("work", "Google", ""))
    assert said(home, "left the office late again") == ["personal.facts: Works at Google"]


def test_not_working_somewhere_else_leaves_the_job(home: MemoryHome) -> None:
    said(home, "I work at Google.", ("work", "Google", ""))
    assert said(home, "I don't work for Amazon any more") == ["personal.facts: Works at Google"]


def test_someone_elses_pet_and_habit_are_theirs(home: MemoryHome) -> None:
    text = "my friend Jonas just got a golden retriever puppy named Biscotti, so cute"
    assert said(home, text, ("pet", "golden retriever puppy", "Biscotti")) == []
    text = "my neighbour plays drums at midnight, should I complain or is that petty"
    assert said(home, text, ("routine", "plays drums at midnight", "")) == []


def test_a_number_in_a_stored_item_does_not_hide_it(home: MemoryHome) -> None:
    said(home, "I drink 3 diet cokes a day.", ("drink_like", "3 diet cokes", ""))
    assert said(home, "quit diet coke cold turkey two weeks ago") == []


def test_a_new_diet_replaces_an_ism(home: MemoryHome) -> None:
    said(home, "Vegetarianism for me.", ("diet", "vegetarianism", ""))
    got = said(home, "I guess I'm pescatarian now", ("diet", "pescatarian", ""))
    assert got == ["diet.restrictions: Pescatarian"]


@pytest.mark.parametrize(
    ("text", "fact", "line"),
    [
        (
            "I work at Spotify as a data analyst.",
            ("work", "Spotify", ""),
            "Works as data analyst at Spotify",
        ),
        (
            "I'm working at a sourdough bakery now!",
            ("work", "sourdough bakery", ""),
            "Works at sourdough bakery",
        ),
        ("I work as a nurse.", ("work", "nurse", ""), "Works as nurse"),
    ],
)
def test_a_job_reads_as_the_user_said_it(
    home: MemoryHome, text: str, fact: tuple[str, str, str], line: str
) -> None:
    assert said(home, text, fact) == [f"personal.facts: {line}"]


def test_quitting_one_job_for_another_keeps_the_new_one(home: MemoryHome) -> None:
    said(home, "I'm an accountant.", ("work", "accountant", ""))
    text = "I finally quit accounting — I'm working at a sourdough bakery now!"
    assert said(home, text, ("work", "sourdough bakery", "")) == [
        "personal.facts: Works at sourdough bakery"
    ]


def test_a_habit_moved_to_another_day_replaces_the_old(home: MemoryHome) -> None:
    said(home, "I sing in a choir on Tuesdays.", ("routine", "choir", ""))
    got = said(home, "Choir practice has moved to Wednesday nights.", ("routine", "choir", ""))
    assert got == ["routine.weekly: Choir practice has moved to Wednesday nights"]


def test_switched_from_one_thing_to_another(home: MemoryHome) -> None:
    said(home, "I love oat milk lattes.", ("drink_like", "oat milk latte", ""))
    text = "Switched from oat milk to soy milk in my lattes, oat started upsetting my stomach."
    assert said(home, text) == ["drink.likes: Likes soy milk"]


def test_a_pet_gone_to_live_elsewhere_is_removed(home: MemoryHome) -> None:
    said(home, "We've got a dog called Rolo.", ("pet", "dog", "Rolo"))
    text = "actually our dog Rolo went to live with my parents on their farm"
    assert said(home, text) == []


def test_its_x_not_y_corrects_y(home: MemoryHome) -> None:
    said(home, "I'm allergic to kiwi.", ("allergy", "kiwi", ""))
    text = "sorry, I mixed that up, it's mango I'm allergic to, not kiwi"
    assert said(home, text) == ["health.allergies: Allergic to mango"]


def test_an_activity_held_with_its_day_is_moved_by_a_new_day(home: MemoryHome) -> None:
    said(home, "I play tennis on Saturdays.", ("exercise", "tennis saturday", ""))
    text = "Tennis is on Sundays now, the club changed our court slot."
    got = said(home, text, ("exercise", "tennis", ""), ("routine", "sunday", ""))
    assert got == [f"routine.weekly: {text[:-1]}"]


def test_an_activity_held_without_a_day_stays_when_a_habit_moves(home: MemoryHome) -> None:
    said(home, "I do yoga.", ("exercise", "yoga", ""))
    text = "Yoga is on Sundays now."
    got = said(home, text, ("exercise", "yoga", ""), ("routine", "sunday", ""))
    assert got == ["fitness.activities: Yoga", f"routine.weekly: {text[:-1]}"]


def test_a_day_correction_moves_the_habit_it_names(home: MemoryHome) -> None:
    said(home, "I do pilates on Tuesdays.", ("routine", "pilates", ""))
    said(home, "I play chess on Tuesdays.", ("routine", "chess", ""))
    got = said(home, "it's not Tuesday, it's Thursday for my pilates")
    assert got == [
        "routine.weekly: I do pilates on Thursdays",
        "routine.weekly: I play chess on Tuesdays",
    ]


def test_a_day_correction_naming_nothing_moves_the_only_plan_on_that_day(
    home: MemoryHome,
) -> None:
    said(home, "My dentist appointment is on Thursday.", ("plan", "dentist appointment", ""))
    got = said(home, "Oops, it's Friday, not Thursday.")
    assert got == ["schedule.upcoming: My dentist appointment is on Friday @2026-03-06"]


def test_a_day_correction_with_two_lines_on_that_day_and_no_name_changes_nothing(
    home: MemoryHome,
) -> None:
    said(home, "I do pilates on Tuesdays.", ("routine", "pilates", ""))
    said(home, "I play chess on Tuesdays.", ("routine", "chess", ""))
    got = said(home, "Oops, it's Friday, not Tuesday.")
    assert got == [
        "routine.weekly: I do pilates on Tuesdays",
        "routine.weekly: I play chess on Tuesdays",
    ]


def test_a_plan_moved_to_another_month_is_said_anew(home: MemoryHome) -> None:
    said(home, "My sister's wedding is on 14 June.", ("plan", "wedding", ""))
    got = said(home, "the wedding's been moved to september")
    assert got == ["schedule.upcoming: My sister's wedding is on 14 September @2026-09-30"]


def test_a_plan_moved_to_another_day_keeps_its_place(home: MemoryHome) -> None:
    said(home, "My interview is on Thursday.", ("plan", "interview", ""))
    got = said(home, "The interview got moved to Friday morning.")
    assert got == ["schedule.upcoming: My interview is on Friday @2026-03-06"]


def test_the_only_plan_held_is_what_an_unnamed_move_moves(home: MemoryHome) -> None:
    said(home, "we're emigrating to Vancouver in march", ("plan", "Vancouver", ""))
    got = said(home, "visa delays \U0001f644 the big move's pushed back to june now")
    assert got == ["schedule.upcoming: We're emigrating to Vancouver in June"]


def test_a_move_naming_no_held_plan_changes_nothing(home: MemoryHome) -> None:
    said(home, "My interview is on Thursday.", ("plan", "interview", ""))
    got = said(home, "The football got moved to Friday.")
    assert got == ["schedule.upcoming: My interview is on Thursday @2026-03-05"]


@pytest.mark.parametrize(
    "text",
    [
        "RIP Nemo the goldfish, he had a good run",
        "lol jk I don't have a goldfish, I'm allergic to them",
        "Nemo went back to the rescue today",
    ],
)
def test_a_pet_gone_in_other_words(home: MemoryHome, text: str) -> None:
    said(home, "My goldfish is called Nemo.", ("pet", "goldfish", "Nemo"))
    assert said(home, text) == []


def test_one_thing_traded_for_another_keeps_its_list(home: MemoryHome) -> None:
    said(home, "I play squash.", ("exercise", "squash", ""))
    got = said(home, "gave up squash for padel, it's way more fun", ("exercise", "padel", ""))
    assert got == ["fitness.activities: Padel"]


def test_switched_to_a_new_medicine_replaces_the_held_one_it_names(home: MemoryHome) -> None:
    said(home, "taking loratadine every day", ("medication", "loratadine", ""))
    got = said(home, "switched to cetirizine, the loratadine wasn't touching it")
    assert got == ["health.medications: Takes cetirizine"]
    assert said(home, "switched to oat milk") == got  # no held thing named: nothing moves


def test_a_rename_with_the_new_name_in_the_next_sentence(home: MemoryHome) -> None:
    said(home, "My cat is called Smudge.", ("pet", "cat", "Smudge"))
    got = said(home, "we renamed the cat, Smudge just didn't suit him. he's Pudding now")
    assert got == ["personal.facts: Cat named Pudding"]


def test_the_end_of_a_diet_or_a_stay_is_no_plan_of_its_own(home: MemoryHome) -> None:
    got = said(
        home,
        "doing dry january properly this year, no alcohol till the end of the month",
        ("diet", "alcohol", ""),
        ("plan", "doing dry january properly this year", ""),
    )
    assert got == ["diet.restrictions: No alcohol (until Tue 2026-03-31) @2026-03-31"]
    said(home, "in Rome till sunday", ("whereabouts", "Rome", ""))
    got = said(home, "change of plans, flying home tomorrow", ("plan", "flying home tomorrow", ""))
    assert [g for g in got if g.startswith("schedule")] == []


@pytest.mark.parametrize(
    ("held", "text", "now"),
    [
        ("Rocky", "oops I wrote it wrong before, the dog's name is Rocco not Rocky", "Rocco"),
        ("Olive", "sorry autocorrect!! it's Oliver. he's a boy lol", "Oliver"),
    ],
)
def test_a_name_put_right(home: MemoryHome, held: str, text: str, now: str) -> None:
    said(home, f"My dog is called {held}.", ("pet", "dog", held))
    got = said(home, text)
    assert [line for line in got if line.startswith("personal.facts")] == [
        f"personal.facts: Dog named {now}"
    ]


def test_its_a_name_with_no_typo_said_renames_nothing(home: MemoryHome) -> None:
    said(home, "My dog is called Olive.", ("pet", "dog", "Olive"))
    got = said(home, "it's Oliver's birthday today")
    assert "personal.facts: Dog named Olive" in got


def test_casual_now_ends_formal(home: MemoryHome) -> None:
    said(home, "Please keep it formal.", ("communication", "formal", ""))
    got = said(
        home,
        "you can drop the formal tone, casual is fine with me",
        ("communication", "casual", ""),
    )
    style = [line for line in got if line.startswith("communication")]
    assert len(style) == 1 and "casual" in style[0]  # the line is the wish as said


@pytest.mark.parametrize(
    ("held", "text", "now"),
    [
        ("girlfriend", "Lena and I got married on saturday!! she's my wife now 💍", "Wife: Lena"),
        ("boyfriend", "Lena proposed and I said yes!!", "Fiancé: Lena"),
    ],
)
def test_a_partner_married_or_engaged_takes_the_new_relation(
    home: MemoryHome, held: str, text: str, now: str
) -> None:
    said(home, f"My {held} is Lena.", ("family", held, "Lena"))
    got = said(home, text)
    assert [line for line in got if line.startswith("personal.facts")] == [f"personal.facts: {now}"]


def test_a_friends_wedding_changes_no_partner(home: MemoryHome) -> None:
    said(home, "My girlfriend is Lena.", ("family", "girlfriend", "Lena"))
    said(home, "My friend Maya is Lena's sister.", ("family", "friend", "Maya"))
    got = said(home, "Maya got married on saturday, what a party")
    assert "personal.facts: Girlfriend: Lena" in got


def test_a_habit_of_a_short_word_moved_to_another_time(home: MemoryHome) -> None:
    said(home, "gym at 6am every day", ("routine", "gym 6am", ""))
    got = said(home, "moved my gym sessions to the evening, 7pm now", ("routine", "gym 7pm", ""))
    assert [line for line in got if line.startswith("routine")] == [
        "routine.daily: Moved my gym sessions to the evening, 7pm now"
    ]


def test_a_plan_moved_to_another_date_of_the_month(home: MemoryHome) -> None:
    said(home, "dermatologist appointment on the 21st", ("plan", "dermatologist", ""), today=THU)
    got = said(home, "they called, the dermatologist moved it to the 28th", today=THU)
    assert [line for line in got if line.startswith("schedule")] == [
        "schedule.upcoming: Dermatologist appointment on the 28th @2026-05-28"
    ]


def test_pickle_is_now_luna(home: MemoryHome) -> None:
    said(home, "we adopted a kitten!! calling her Pickle", ("pet", "kitten", "Pickle"))
    got = said(home, "the kids have overruled me, Pickle is now officially Luna 🙄")
    assert [line for line in got if line.startswith("personal")] == [
        "personal.facts: Kitten named Luna"
    ]


def test_a_pets_name_is_never_a_taste(home: MemoryHome) -> None:
    said(home, "my cat is called Mochi", ("pet", "cat", "Mochi"))
    got = said(home, "mochi just knocked my tea all over the laptop", ("food_dislike", "mochi", ""))
    assert not any(line.startswith("food") for line in got)


def test_a_diet_said_with_no_reads_once(home: MemoryHome) -> None:
    assert said(home, "no dairy for me", ("diet", "no dairy", "")) == [
        "diet.restrictions: No dairy"
    ]


def test_a_medicine_held_with_its_dose_is_ended_by_its_name(home: MemoryHome) -> None:
    said(home, "I take sertraline 100 mg", ("medication", "sertraline 100 mg", ""))
    assert said(home, "off the sertraline since january, tapered with my doc") == []


def test_a_dislike_said_to_be_over_is_ended(home: MemoryHome) -> None:
    said(home, "I hate the treadmill", ("dislike", "treadmill", ""))
    assert said(home, "Don't hate the treadmill anymore, it's been a lifesaver") == []


def test_a_held_dislike_stays_when_a_like_ends(home: MemoryHome) -> None:
    said(home, "I hate the treadmill", ("dislike", "treadmill", ""))
    got = said(home, "I don't like the treadmill anymore")
    assert got == ["preferences.dislikes: Dislikes treadmill"]


def test_a_relative_corrected_to_another_relation_keeps_one_line(home: MemoryHome) -> None:
    said(home, "my brother Arjun", ("family", "brother", "Arjun"))
    got = said(
        home, "sorry, Arjun is my cousin actually, not my brother", ("family", "cousin", "Arjun")
    )
    assert got == ["personal.facts: Cousin: Arjun"]


def test_two_relatives_of_one_name_are_kept_without_a_correction(home: MemoryHome) -> None:
    said(home, "my brother Sam", ("family", "brother", "Sam"))
    got = said(home, "my son is called Sam too", ("family", "son", "Sam"))
    assert got == ["personal.facts: Brother: Sam", "personal.facts: Son: Sam"]


def test_a_pet_name_corrected_with_the_replaces_the_old(home: MemoryHome) -> None:
    said(home, "my dog Biscuit", ("pet", "dog", "Biscuit"))
    got = said(
        home, "Oh silly me, the dog's called Bramble, not Biscuit!", ("pet", "dog", "Bramble")
    )
    assert got == ["personal.facts: Dog named Bramble"]


def test_someone_elses_negation_leaves_the_writers_line(home: MemoryHome) -> None:
    said(home, "I'm vegan", ("diet", "vegan", ""))
    got = said(home, "my girlfriend's not vegan though, she cooks fish every friday")
    assert got == ["diet.restrictions: Vegan"]


def test_the_writers_negation_beside_someone_elses_still_ends_the_line(home: MemoryHome) -> None:
    said(home, "I love sushi", ("food_like", "sushi", ""))
    got = said(home, "my husband's obsessed with it, but no more sushi for me")
    assert got == []


def test_a_plan_to_move_is_done_when_the_new_home_is_said(home: MemoryHome) -> None:
    said(home, "I live in Cardiff", ("home", "Cardiff", ""))
    said(home, "Moving to Bristol on the 30th of May for a new job!!", ("plan", "Bristol", ""))
    got = said(home, "all moved into the new flat in Bristol", ("home", "Bristol", ""))
    assert got == ["personal.facts: Lives in Bristol"]


def test_a_plan_to_move_elsewhere_stays(home: MemoryHome) -> None:
    said(home, "Moving to Bristol on the 30th of May for a new job!!", ("plan", "Bristol", ""))
    got = said(home, "I live in Cardiff", ("home", "Cardiff", ""))
    assert "personal.facts: Lives in Cardiff" in got and len(got) == 2


@pytest.mark.parametrize(
    ("text", "facts", "lines"),
    [
        (
            "I only eat halal, and I'm allergic to sesame so hummus is a no sadly",
            [("diet", "halal", ""), ("allergy", "sesame", ""), ("food_dislike", "hummus", "")],
            ["diet.restrictions: Halal", "health.allergies: Allergic to sesame"],
        ),
        (
            "I'm allergic to sesame and I can't stand olives",
            [("allergy", "sesame", ""), ("food_dislike", "olives", "")],
            ["food.dislikes: Dislikes olives", "health.allergies: Allergic to sesame"],
        ),
        (  # the reason said, though not read as a fact of its own
            "6 months pregnant so the brie's off limits i assume",
            [("food_dislike", "brie", "")],
            [],
        ),
    ],
)
def test_what_a_health_fact_rules_out_is_no_taste(
    home: MemoryHome, text: str, facts: list[tuple[str, str, str]], lines: list[str]
) -> None:
    assert said(home, text, *facts) == lines


def test_a_pets_real_name_found_out_renames_it(home: MemoryHome) -> None:
    said(home, "we've got a rescue greyhound now, Dotty", ("pet", "greyhound", "Dotty"))
    got = said(home, "vet scanned her chip and it turns out her real name is Dolly, so that's it")
    assert got == ["personal.facts: Greyhound named Dolly"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("mark got made redundant today. bit of a shock tbh", True),
        ("my husband got laid off today", True),
        ("got made redundant today. bit of a shock tbh", False),
    ],
)
def test_someone_elses_job_lost_leaves_the_users(home: MemoryHome, text: str, kept: bool) -> None:
    said(home, "My husband is called Mark.", ("family", "husband", "Mark"))
    said(home, "I'm a teacher.", ("work", "teacher", ""))
    got = said(home, text)
    assert ("personal.facts: Works as teacher" in got) is kept


@pytest.mark.parametrize(
    "text",
    [
        "ok you can go back to normal answers lol, I was just grumpy earlier, sorry",
        "back to your usual replies please",
    ],
)
def test_back_to_normal_ends_every_way_of_answering(home: MemoryHome, text: str) -> None:
    said(home, "just give me short answers from now on", ("communication", "short answers", ""))
    said(home, "and no emojis", ("communication", "no emojis", ""))
    assert said(home, text) == []


def test_back_to_a_language_ends_answers_in_another(home: MemoryHome) -> None:
    said(home, "answer me in spanish from now on", ("communication", "answer in spanish", ""))
    said(home, "keep it short", ("communication", "short", ""))
    assert said(home, "jaja too hard, back to english please 😅") == [
        "communication.style: Keep it short"
    ]


@pytest.mark.parametrize(
    "text", ["things are back to normal at work now", "back to english class on monday"]
)
def test_back_to_normal_life_ends_no_way_of_answering(home: MemoryHome, text: str) -> None:
    said(home, "answer me in spanish from now on", ("communication", "answer in spanish", ""))
    assert said(home, text) == ["communication.style: Answer me in spanish from now on"]


@pytest.mark.parametrize(
    ("held", "text", "now"),
    [
        (
            "me and my sister go every wednesday, salsa",
            "ugh just got an email, they're moving it to thursdays from next week",
            "routine.weekly: Me and my sister go every thursday, salsa",
        ),
        (
            "I swim on mondays and wednesdays before work",
            "they changed the lane times so it's tuesdays and thursdays now",
            "routine.weekly: I swim on tuesdays and thursdays before work",
        ),
    ],
)
def test_the_only_weekly_habit_moves_to_the_days_said(
    home: MemoryHome, held: str, text: str, now: str
) -> None:
    said(home, held, ("routine", held[:60], ""))
    assert said(home, text) == [now]


def test_days_said_with_two_weekly_habits_and_no_name_move_nothing(home: MemoryHome) -> None:
    said(home, "choir on tuesdays", ("routine", "choir on tuesdays", ""))
    said(home, "I swim on mondays", ("routine", "swim on mondays", ""))
    got = said(home, "they're moving it to thursdays from next week")
    assert got == ["routine.weekly: Choir on tuesdays", "routine.weekly: I swim on mondays"]


@pytest.mark.parametrize(
    "text",
    [
        "We lost Toffee on Sunday. She was 14 and her kidneys had been failing.",
        "had to have Toffee put to sleep this afternoon, can u help me word a txt to the gaffer",
    ],
)
def test_a_pet_lost_is_removed(home: MemoryHome, text: str) -> None:
    said(home, "My dog Toffee is 14.", ("pet", "dog", "Toffee"))
    assert said(home, text) == []


def test_losing_a_match_ends_no_pet(home: MemoryHome) -> None:
    said(home, "My dog Toffee is 14.", ("pet", "dog", "Toffee"))
    assert said(home, "We lost the match on Sunday.") == ["personal.facts: Dog named Toffee"]


def test_a_job_read_where_it_ends_is_not_written_back(home: MemoryHome) -> None:
    said(home, "I work at the warehouse.", ("work", "warehouse", ""))
    text = "got let go from the warehouse today so... job hunting I guess"
    assert said(home, text, ("work", "warehouse", "")) == []


def test_a_doctor_taking_the_writer_off_a_medicine_ends_it(home: MemoryHome) -> None:
    said(home, "I take amlodipine 5mg.", ("medication", "amlodipine", ""))
    assert said(home, "So she's taken me off amlodipine completely.") == []


def test_care_work_left_ends_the_job(home: MemoryHome) -> None:
    said(home, "I'm a carer.", ("work", "carer", ""))
    assert said(home, "ive left care work, finished friday, not doin it no more") == []


def test_leaving_work_early_ends_no_job(home: MemoryHome) -> None:
    said(home, "I'm a carer.", ("work", "carer", ""))
    assert said(home, "left work early today, knackered") == ["personal.facts: Works as carer"]


def test_veggie_said_in_chat_ends_vegetarian(home: MemoryHome) -> None:
    said(home, "I'm vegetarian.", ("diet", "vegetarian", ""))
    assert said(home, "not veggie anymore, started eating chicken again cos of nights") == []


def test_a_dislike_left_behind_is_a_like_now(home: MemoryHome) -> None:
    said(home, "I hate olives.", ("food_dislike", "olives", ""))
    text = "used to hate olives but the chef got me onto em, actually love em now"
    assert said(home, text, ("food_like", "olives", "")) == ["food.likes: Likes olives"]


def test_new_keys_make_the_place_home(home: MemoryHome) -> None:
    said(home, "I live in Newry.", ("home", "Newry", ""))
    text = "we're in Armagh now, got the keys yesterday"
    assert said(home, text, ("whereabouts", "Armagh", "")) == ["personal.facts: Lives in Armagh"]


def test_a_pet_s_ailment_is_not_the_writer_s(home: MemoryHome) -> None:
    text = "my old collie Bess is 15 now n struggling with her back legs"
    lines = said(home, text, ("pet", "collie", "Bess"), ("condition", "back legs", ""))
    assert lines == ["personal.facts: Collie named Bess"]


def test_a_fast_kept_is_said_as_one_not_as_going_without(home: MemoryHome) -> None:
    text = "im fasting for ramadan till the 20th so no food in daylight"
    lines = said(home, text, ("diet", "fasting", ""), today=date(2026, 3, 4))
    assert lines == ["diet.restrictions: Fasting (until Fri 2026-03-20) @2026-03-20"]


def test_a_swapped_pet_reading_is_put_back_in_order(home: MemoryHome) -> None:
    lines = said(home, "my old collie Bess is 15 now", ("pet", "Bess", "collie"))
    assert lines == ["personal.facts: Collie named Bess"]


def test_caffeine_given_up_is_a_rule_kept(home: MemoryHome) -> None:
    text = "not drinking tea anymore, gave up caffeine cos of my heart palpitations."
    assert said(home, text, ("diet", "caffeine", "")) == ["diet.restrictions: No caffeine"]


def test_a_sport_given_up_is_no_diet(home: MemoryHome) -> None:
    said(home, "I go climbing twice a week.", ("exercise", "climbing", ""))
    text = "After the second dislocation I've given up climbing for good."
    assert said(home, text, ("diet", "climbing", "")) == []


def test_a_pet_that_is_no_animal_is_not_stored(home: MemoryHome) -> None:
    text = "we're mostly retired teachers and one very loud fisherman. Our secretary Morag quit"
    assert said(home, text, ("pet", "fisherman", "Morag")) == []
    assert said(home, "our rescue Pip is a greyhound", ("pet", "rescue", "Pip")) == [
        "personal.facts: Rescue named Pip"
    ]
