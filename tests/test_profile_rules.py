"""Fixed phrasings read by rule, ahead of the model (`memory.profile.rules`)."""

from __future__ import annotations

from datetime import date

import pytest

from memagent.memory.profile.fact_schema import Extracted
from memagent.memory.profile.fallback import fallback_facts
from memagent.memory.profile.rules import merge, rule_facts


def read(sentence: str) -> list[tuple[str, str, str]]:
    return [(f.kind, f.value, f.name) for f in rule_facts([sentence])]


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("I'm allergic to cats and dogs.", [("allergy", "cats", ""), ("allergy", "dogs", "")]),
        ("I have a severe allergy to cashews.", [("allergy", "cashews", "")]),
        ("I have a nut allergy.", [("allergy", "nut", "")]),
        ("I'm allergic to almonds too.", [("allergy", "almonds", "")]),
        ("I'm allergic to it.", []),  # what "it" is needs the sentence before
        (
            "I have two daughters, Ana and Bea.",
            [("family", "daughter", "Ana"), ("family", "daughter", "Bea")],
        ),
        (
            "I speak Portuguese and English.",
            [("language", "Portuguese", ""), ("language", "English", "")],
        ),
        ("I collect vintage stamps.", [("like", "vintage stamps", "")]),
        ("I'm flying to Tokyo next month for a conference.", [("plan", "Tokyo", "")]),
        ("I'm flying to Tokyo.", []),  # no time: not a plan by rule
        ("I'm a teacher and I run every morning.", [("work", "teacher", "")]),
        ("I am a student nurse.", [("work", "student nurse", "")]),
        ("I'm a big fan of jazz.", [("like", "jazz", "")]),  # a liking, not a job
        ("I'm a night owl.", []),
        ("I retired in January, no more spreadsheets for me", [("work", "retired", "")]),
        ("I'm retired now.", [("work", "retired", "")]),
        ("My dad retired from the navy.", []),  # someone else
        ("No beef for me, it's a religious thing.", [("diet", "beef", "")]),
        ("No more sushi for me.", []),  # a like ended, not a diet
        ("Everyone calls me Bobby, please do too", [("name", "Bobby", "")]),
        ("my name's Dariusz but everyone calls me Darek", [("name", "Dariusz", "")]),
        ("hiya, name's Declan, I drive a taxi", [("name", "Declan", "")]),
        (
            "I'm a year 6 teacher and I live in leeds",
            [("home", "leeds", ""), ("work", "year 6 teacher", "")],
        ),
        ("I am a retired schoolmistress", [("work", "retired", "")]),
        ("I work like nurse in the hospital", [("work", "nurse", "")]),  # no article
        ("I'm a backend dev, so skip the basics", [("work", "backend dev", "")]),
        ("ok I'm an SRE, just moved onto the platform team", [("work", "SRE", "")]),
        ("I work as part of a team", []),
        ("With thanks, Gerald", [("name", "Gerald", "")]),
        ("Yours sincerely, Edna Price", [("name", "Edna Price", "")]),
        ("My dog's name's Rex", []),  # the dog's, said as 'name's' after a word
        ("Thanks, Claude", []),  # thanking someone, not signing
        ("I've lived in Houston for ten years.", [("home", "Houston", "")]),
        ("I said Madrid but I actually live in Toledo", [("home", "Toledo", "")]),
        ("at a music festival in Roskilde till saturday", [("whereabouts", "Roskilde", "")]),
        ("snowed in at a cabin near Bergen until friday", [("whereabouts", "Bergen", "")]),
        ("In Seoul on business, flying home Saturday", [("whereabouts", "Seoul", "")]),
        ("Jury duty has me stuck in Fresno until the 12th", [("whereabouts", "Fresno", "")]),
        ("Meeting Sarah in Paris this weekend", []),  # going somewhere: not a stay
        ("Our son Mateo is 9 and obsessed with dinosaurs", [("family", "son", "Mateo")]),
        (
            "our two cats are Salt and Pepper, brothers from the same litter",
            [("pet", "cat", "Salt"), ("pet", "cat", "Pepper")],
        ),
        ("we live in a tiny flat in Hackney", [("home", "Hackney", "")]),
        ("I love Paris in the spring", []),  # no end: not a stay
    ],
)
def test_rules(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert read(sentence) == facts


def test_habits_are_read_only_with_a_time_or_a_day() -> None:
    assert [f.kind for f in fallback_facts(["I rarely sleep before 2am."])] == ["routine"]
    assert [f.kind for f in fallback_facts(["I stay at my partner's place on weekends."])] == [
        "routine"
    ]
    assert fallback_facts(["I always forget my keys."]) == []
    assert fallback_facts(["My brother usually calls at 9pm."]) == []


def test_the_rules_reading_wins_over_the_models() -> None:
    rules = [Extracted(kind="plan", value="Tokyo")]
    model = [Extracted(kind="whereabouts", value="Tokyo"), Extracted(kind="exercise", value="yoga")]
    assert [f.kind for f in merge(rules, model)] == ["plan", "exercise"]


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("I love a good flat white.", [("like", "flat white")]),
        ("My sister's wedding is in June.", [("plan", "sister's wedding")]),
        ("I have a dentist appointment on March 10th.", [("plan", "dentist appointment")]),
        ("I like it.", []),
        ("My brother's party was great.", []),  # not ahead: no date
    ],
)
def test_loose_patterns_read_only_as_a_fallback(
    sentence: str, facts: list[tuple[str, str]]
) -> None:
    assert [(f.kind, f.value) for f in fallback_facts([sentence])] == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("Latex allergy here.", [("allergy", "Latex", "")]),
        ("I have a nut allergy.", [("allergy", "nut", "")]),
        (
            "My mother-in-law, Ruth, is moving in with us next month.",
            [("family", "mother-in-law", "Ruth")],
        ),
        ("I've got two cats, Salt and Pepper.", [("pet", "cat", "Salt"), ("pet", "cat", "Pepper")]),
        ("Correction: I relocated to Cork in January.", [("home", "Cork", "")]),
        ("I'm at the Singapore office through Saturday.", [("whereabouts", "Singapore", "")]),
        (
            "Camping in the Highlands until the end of the month.",
            [("whereabouts", "Highlands", "")],
        ),
        ("Working remotely from Lisbon for the next ten days.", [("whereabouts", "Lisbon", "")]),
        ("So I'm stuck in Nairobi till Monday.", [("whereabouts", "Nairobi", "")]),
        ("I'm down in Brighton for the weekend.", [("whereabouts", "Brighton", "")]),
        ("Working out of our Krakow office through the 24th.", [("whereabouts", "Krakow", "")]),
        ("I moved from Bristol to Norwich in February.", [("home", "Norwich", "")]),
        ("Home is Loughborough.", [("home", "Loughborough", "")]),
        ("Home's Galway these days.", [("home", "Galway", "")]),
        ("Home is where the heart is.", []),
        ("I'm stuck in traffic.", []),  # no place, no end
        ("I work in Leeds.", []),  # no end: not a stay
    ],
)
def test_rules_read_general_shapes(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert read(sentence) == facts


def test_an_event_ahead_needs_a_time_ahead_not_any_in() -> None:
    assert fallback_facts(["My flight got delayed in Nairobi."]) == []
    assert [f.value for f in fallback_facts(["We've got a big family reunion in August."])] == [
        "big family reunion"
    ]


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("My name is Ilse Varga.", "Ilse Varga"),
        ("my name is Jean-Luc Picard, hi", "Jean-Luc Picard"),
        ("Call me Bo.", "Bo"),
        ("My name is Ilse and I live in Oslo.", "Ilse"),
    ],
)
def test_the_own_name_is_the_whole_name_said(said: str, name: str) -> None:
    assert [f.value for f in rule_facts([said]) if f.kind == "name"] == [name]


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("horror movies are not my thing at all", [("dislike", "horror movies", "")]),
        ("Gardening is my therapy tbh", [("like", "Gardening", "")]),
        ("It is not my thing", []),
    ],
)
def test_my_thing_is_read_only_as_a_fallback(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    assert [(f.kind, f.value, f.name) for f in fallback_facts([sentence])] == facts
    assert read(sentence) == []


def test_a_way_to_answer_is_the_part_that_says_it() -> None:
    said = "you can go into more detail now, the short answers were a bit too short tbh"
    assert ("communication", "you can go into more detail now", "") in read(said)


def test_a_long_value_is_cut_at_a_word() -> None:
    said = (
        "Please keep your answers really short and plain and free of any jargon whatsoever thanks"
    )
    value = next(v for k, v, _ in read(said) if k == "communication")
    rest = said.removeprefix("Please ")
    assert len(value) <= 60 and rest.startswith(value) and rest[len(value)] == " "


def test_the_models_reading_of_a_name_the_rules_placed_is_dropped() -> None:
    rules = [Extracted(kind="family", value="son", name="Mateo")]
    model = [Extracted(kind="pet", value="Mateo", name="dinosaur")]
    assert merge(rules, model) == rules


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("our bearded dragon is called Sprocket", [("pet", "bearded dragon", "Sprocket")]),
        (
            "We've got a rescue greyhound called Pumpernickel.",
            [("pet", "greyhound", "Pumpernickel")],
        ),
        ("My labrador Biscuit is nine now.", [("pet", "labrador", "Biscuit")]),
    ],
)
def test_pets_named_by_kind_or_breed(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert read(sentence)[:1] == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("I'm based in Kuala Lumpur.", [("home", "Kuala Lumpur", "")]),
        ("update: we relocated to Penang for my partner's job", [("home", "Penang", "")]),
        ("moved to Bristol last month, loving it so far", [("home", "Bristol", "")]),
        ("I rent a flat in Hackney.", [("home", "Hackney", "")]),
        ("I think I said Porto but no, I live in Braga.", [("home", "Braga", "")]),
        ("I'm not nursing anymore, I retrained as a midwife.", [("work", "midwife", "")]),
        ("On a work trip to Accra through Thursday.", [("whereabouts", "Accra", "")]),
        ("On a work trip to Accra next month.", []),  # no end said: a plan, not a stay
        (
            "two budgies, Kiwi and Mango, they never shut up lol",
            [("pet", "budgie", "Kiwi"), ("pet", "budgie", "Mango")],
        ),
        (
            "I have twin daughters, Ama and Esi.",
            [("family", "daughter", "Ama"), ("family", "daughter", "Esi")],
        ),
    ],
)
def test_rules_read_more_ways_of_saying_it(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    assert read(sentence) == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("For the next ten days I'm off sugar completely.", [("diet", "sugar", "")]),
        ("doing a juice cleanse until Saturday, send help", [("diet", "juice cleanse", "")]),
        ("I'm doing Whole30 until the end of March.", [("diet", "Whole30", "")]),
        (
            "I'm on a liquid diet till Monday after my dental surgery.",
            [("diet", "liquid diet", "")],
        ),
        ("I'm doing no carbs until my holiday on the 28th.", [("diet", "carbs", "")]),
        ("Training for a race, so no alcohol until the 22nd.", [("diet", "alcohol", "")]),
        ("fasting for Ramadan until the 19th, so no lunch ideas", [("diet", "fasting", "")]),
        ("I'm on a diet.", []),  # no end said: too little to keep
        ("I'm doing a juice cleanse.", []),
        ("No plans until Friday, just chilling.", []),  # plans are not eaten
        ("I'm off to Paris until Friday.", []),
        ("I'm on antibiotics until Friday.", []),
        ("im off dairy until the 18th, doctor wants to check", [("diet", "dairy", "")]),
        ("Giving up sweets for Lent, until the 5th.", [("diet", "sweets", "")]),
        ("Doing no-spend November this month.", []),
    ],
)
def test_a_diet_kept_for_a_while_is_read_with_its_end(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    got = [(f.kind, f.value, f.name) for f in rule_facts([sentence], date(2026, 3, 4))]
    assert [g for g in got if g[0] == "diet"] == facts


def test_a_time_word_is_read_against_the_day_the_statement_was_made() -> None:
    said = ["I'm doing keto until 2026-03-10."]
    assert rule_facts(said, date(2026, 3, 4)) == [Extracted(kind="diet", value="keto")]
    assert rule_facts(said, date(2026, 3, 20)) == []  # its end has passed: no diet kept now
    assert rule_facts(["I'm in Oslo until Friday."], date(2026, 3, 4))[0].kind == "whereabouts"


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        (
            "I live in Dublin with my girlfriend Aoife and our dog Bran.",
            [("pet", "dog", "Bran"), ("family", "girlfriend", "Aoife"), ("home", "Dublin", "")],
        ),
        ("Maya's my middle name, I actually go by Lin.", [("name", "Lin", "")]),
        (
            "I'm not at the café anymore, started as a junior developer last week!",
            [("work", "junior developer", "")],
        ),
        ("Got a new job as a paramedic, starting Monday.", [("work", "paramedic", "")]),
        ("I work as a nurse in Leeds.", [("work", "nurse", "")]),
        ("I started as a volunteer years ago.", [("work", "volunteer", "")]),
    ],
)
def test_rules_read_names_and_jobs_said_in_passing(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    assert read(sentence) == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("I'm a massive Arsenal fan, have been since I was six.", [("like", "Arsenal", "")]),
        ("I've always been a huge fan of the Beatles.", [("like", "Beatles", "")]),
        ("I'm a fan.", []),
        ("I live in a small village just outside York.", [("home", "York", "")]),
        (
            "Can you always reply in Spanish from now on?",
            [("communication", "always reply in Spanish from now on", "")],
        ),
    ],
)
def test_likings_homes_and_standing_requests(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    assert read(sentence) == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("I am from Sweden, now living in Rotterdam.", [("home", "Rotterdam", "")]),
        ("Arabic is my mother tongue.", [("language", "Arabic", "")]),
        ("My first language is Tagalog.", [("language", "Tagalog", "")]),
        ("Big fan of Ethiopian food, injera with everything", [("like", "Ethiopian food", "")]),
        ("The fan is broken.", []),
        ("I am not eating the pork, it is against my religion.", [("diet", "pork", "")]),
        ("I'm a third year med student.", [("work", "third year med student", "")]),
        ("I'm a nurse practitioner now!", [("work", "nurse practitioner", "")]),
        ("My granddaughter Maisie just started school.", [("family", "granddaughter", "Maisie")]),
    ],
)
def test_rules_read_second_round_shapes(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert read(sentence) == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("dark chocolate is my weakness", [("like", "dark chocolate", "")]),
        ("Pizza is my favourite food.", [("food_like", "Pizza", "")]),
        ("My sister is my favourite person.", []),
        ("i'm in tokyo till the 20th!! ramen recs pls", [("whereabouts", "tokyo", "")]),
        ("im in bed till noon lol", []),
        (
            "working from lisbon for the next two weeks, assume WEST time",
            [("whereabouts", "lisbon", "")],
        ),
        ("train strike, crashing at a friend's in munich tonight", [("whereabouts", "munich", "")]),
        ("working from home for the next two weeks", []),
        ("stuck in traffic till friday", []),
        ("I'm in Tokyo till the 20th.", [("whereabouts", "Tokyo", "")]),
    ],
)
def test_tastes_said_as_weaknesses_and_stays_typed_in_lower_case(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    got = [(f.kind, f.value, f.name) for f in rule_facts([sentence], date(2026, 3, 4))]
    assert got == facts


def test_the_models_food_list_wins_over_a_general_like() -> None:
    ruled = rule_facts(["dark chocolate is my weakness"], date(2026, 3, 4))
    model = [Extracted(kind="food_dislike", value="dark chocolate")]
    assert [(f.kind, f.value) for f in merge(ruled, model)] == [("food_like", "dark chocolate")]


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("ON HOLIDAY in lanzarote till the 18th!!!", [("whereabouts", "lanzarote", "")]),
        ("visiting my sister in Leeds until sunday", [("whereabouts", "Leeds", "")]),
        (
            "working out of the Berlin office through the end of the month",
            [("whereabouts", "Berlin", "")],
        ),
        (
            "staying at my mum's till the 20th while they fix the boiler",
            [("whereabouts", "my mum's", "")],
        ),
        ("no caffeine at all for 5 days, it's for a sleep study", [("diet", "caffeine", "")]),
        ("off dairy for the next ten days, elimination diet", [("diet", "dairy", "")]),
        ("my cat's called Mr Whiskers and he hates mondays", [("pet", "cat", "Mr Whiskers")]),
        ("I'm off work till monday", []),
        ("staying at my mum's", []),  # no end: not read as a stay
    ],
)
def test_stays_and_diets_in_chat_shapes(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert read(sentence) == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("went fully vegan over christmas, so not just veggie anymore", [("diet", "vegan", "")]),
        ("I'm veggie", [("diet", "vegetarian", "")]),
        ("I'm not vegan", []),
        ("my sister is vegan", []),
        ("vegan food is great", []),
        ("sprained my ankle at netball", [("condition", "sprained ankle", "")]),
        ("broke my arm skiing over christmas", [("condition", "broken arm", "")]),
        ("currently in Hanoi, working remotely from here", [("whereabouts", "Hanoi", "")]),
        ("I'm in Oslo for a bit", [("whereabouts", "Oslo", "")]),
    ],
)
def test_diets_tastes_injuries_and_stays_in_chat_words(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    assert read(sentence) == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("been getting really into old westerns instead", [("like", "old westerns", "")]),
        ("I'm into my third week of training", []),
        ("not really into podcasts, I prefer audiobooks", [("dislike", "podcasts", "")]),
        ("not really into avocado anymore", [("dislike", "avocado", "")]),
    ],
)
def test_a_taste_said_as_into_fills_in(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert [(f.kind, f.value, f.name) for f in fallback_facts([sentence])] == facts


def test_a_stay_is_the_place_in_the_part_that_says_its_end() -> None:
    said = "I'm Priyanka, a nurse in Edinburgh, and I'm staying at my mum's till the 20th"
    assert ("whereabouts", "my mum's", "") in read(said)
    assert ("whereabouts", "Edinburgh", "") not in read(said)
    assert read("I'm in Berlin, until Friday") == [("whereabouts", "Berlin", "")]


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("This weekend I'm at the lake house, no signal", [("whereabouts", "lake house", "")]),
        ("At a retreat in the hills for a week.", [("whereabouts", "retreat in the hills", "")]),
        ("sober spell, no alcohol for me through the end of May", [("diet", "alcohol", "")]),
        ("at the hotel bar right now", []),  # no end said: no stay read
    ],
)  # fmt: skip
def test_a_stay_at_a_lodging_and_a_diet_for_me_with_an_end(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    assert [(k, v, n) for k, v, n in read(sentence) if k in ("whereabouts", "diet")] == facts


@pytest.mark.parametrize(
    ("sentence", "sober"),
    [
        ("I don't drink alcohol anymore. 6 months sober", True),
        ("two years sober this week", True),
        ("I've quit drinking", True),
        ("doing sober october", False),  # a month's challenge, read with its end elsewhere
        ("my dad is sober now", False),
    ],
)
def test_a_sober_writer_keeps_a_rule_of_no_alcohol(sentence: str, sober: bool) -> None:
    assert (("diet", "alcohol", "") in read(sentence)) is sober


@pytest.mark.parametrize(
    ("sentence", "place"),
    [
        ("we just landed in Tokyo!", "Tokyo"),
        ("Finally arrived in Buenos Aires, exhausted", "Buenos Aires"),
        ("I arrived in Berlin in 2019", None),  # long ago: no stay now
        ("my sister landed in Rome", None),
    ],
)
def test_an_arrival_is_a_stay_now(sentence: str, place: str | None) -> None:
    got = [v for k, v, _ in read(sentence) if k == "whereabouts"]
    assert got == ([place] if place else [])


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("I'm Ruth 🙈", [("name", "Ruth", "")]),
        ("hmm actually use my full name, Elizabeth, it sounds nicer", [("name", "Elizabeth", "")]),
        ("I'm Fine", []),
        ("I'm Kirsty by the way, sorry, should've said", [("name", "Kirsty", "")]),
        (
            "Oh hello dear, I'm Margaret, my grandchildren call me Nana Mags.",
            [("name", "Margaret", "")],
        ),
        ("Hi, I'm Sam, I work in IT", [("name", "Sam", "")]),
        ("I'm Irish, my wife is Dutch", []),
        ("I'm Tired, long day", []),
        ("got promoted to senior dev today 🥳🥳", [("work", "senior dev", "")]),
        ("I was promoted to head nurse in March", [("work", "head nurse", "")]),
        (
            "Joined Deloitte as a data analyst, relocating to Hyderabad",
            [("work", "data analyst", "")],
        ),
        ("I joined the gym as a member", []),
    ],
)
def test_a_name_said_alone_and_a_promotion(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    assert [f for f in read(sentence) if f[0] in ("name", "work")] == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("ok so I really love indian food, especially paneer", [("food_like", "indian food", "")]),
        ("Gardening is my happy place", [("like", "Gardening", "")]),
        ("my wife is Ingrid, we been married 30 years", [("family", "wife", "Ingrid")]),
        ("my wife is Italian.", []),
        ("ironic bc I don't even like coffee", [("dislike", "coffee", "")]),
        ("I don't like sushi anymore.", []),  # an end, which the negation reads
        ("Big techno fan, always have been", [("like", "techno", "")]),
        ("I also can't do spicy food at all", [("dislike", "spicy food", "")]),
        ("I can't do this anymore", []),
    ],
)
def test_more_tastes_and_a_relative_named(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert read(sentence) == facts


def test_a_taste_a_rule_reads_leaves_the_models_other_tastes() -> None:
    rules = [Extracted(kind="food_like", value="indian food")]
    model = [
        Extracted(kind="food_like", value="paneer"),
        Extracted(kind="food_like", value="indian"),
    ]
    assert [f.value for f in merge(rules, model)] == ["indian food", "paneer", "indian"]


def test_a_stay_at_a_hotel_in_a_city_is_the_city() -> None:
    assert read("staying at the Hilton in Abu Dhabi till Thursday for the audit") == [
        ("whereabouts", "Abu Dhabi", "")
    ]


def test_id_rather_you_kept_replies_brief_is_a_way_of_answering() -> None:
    got = read("I'd rather you kept replies brief, the long ones are too much")
    assert got == [("communication", "I'd rather you kept replies brief", "")]


@pytest.mark.parametrize(
    ("sentence", "home"),
    [
        ("Update: we've moved down to the Gold Coast, finally near the beach", "Gold Coast"),
        ("all moved into the new flat in Bristol 🎉 boxes everywhere", "Bristol"),
        ("I moved back to Leeds last year", "Leeds"),
        ("we have moved over to Teams at work", None),
        ("I've moved over to ICU, same hospital", None),
    ],
)
def test_a_move_said_more_ways(sentence: str, home: str | None) -> None:
    assert [v for k, v, _ in read(sentence) if k == "home"] == ([home] if home else [])


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("Priya is my wife.", [("family", "wife", "Priya")]),
        ("Arabic is my mother tongue.", []),
        ("sorry I said wrong, Arjun is my cousin actually", [("family", "cousin", "Arjun")]),
        ("This is my sister", []),
        ("She is my mum", []),
    ],
)
def test_a_name_said_before_its_relation(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert [f for f in read(sentence) if f[0] == "family"] == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("Oh silly me, the dog's called Bramble, not Biscuit!", [("pet", "dog", "Bramble")]),
        ("the cat's name is Miso", [("pet", "cat", "Miso")]),
        ("the dog next door is called Rex", []),
    ],
)
def test_the_pet_named(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert [f for f in read(sentence) if f[0] == "pet"] == facts


@pytest.mark.parametrize(
    ("sentence", "job"),
    [
        ("ICU nurse here, three 12-hour days a week", "ICU nurse"),
        ("custody sergeant here, so 10 hour shifts, mostly lates", "custody sergeant"),
        ("Hi, retired teacher here.", "retired teacher"),
        ("plumber by trade, 20 years of it", "plumber"),
        ("passed!! officially a registered nurse now", "registered nurse"),
        ("knees are done, starting as a site inspector for the council monday", "site inspector"),
        ("The nurse here is lovely", None),
        ("My son is now officially a teacher", None),
        ("my daughter is starting as a nurse", None),
    ],
)
def test_a_job_said_without_im_a(sentence: str, job: str | None) -> None:
    assert [f.value for f in rule_facts([sentence]) if f.kind == "work"] == ([job] if job else [])


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        (
            "electrician, 1 very daft springer spaniel called Bramble, live in Swindon",
            [("pet", "spaniel", "Bramble")],
        ),
        ("retired in march after 38 years teaching chemistry.", [("work", "retired", "")]),
        (
            "I grew up speaking Gujarati with my nani and English at school, so both really",
            [("language", "Gujarati", ""), ("language", "English", "")],
        ),
        ("grew up speaking Python with my dad lol", []),
    ],
)
def test_a_pet_with_words_before_it_a_retirement_and_languages_grown_up_with(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    got = [(f.kind, f.value, f.name) for f in rule_facts([sentence])]
    assert [g for g in got if g[0] in ("pet", "work", "language")] == facts


def test_retired_said_first_and_something_else_retired() -> None:
    assert [
        f.value for f in rule_facts(["Retired yesterday after 38 years."]) if f.kind == "work"
    ] == ["retired"]
    assert not [f for f in rule_facts(["Retired the old car finally"]) if f.kind == "work"]


@pytest.mark.parametrize(
    ("sentence", "name"),
    [
        ("it's Jo by the way", "Jo"),
        ("hiya its Siobhan btw, the other half set you up", "Siobhan"),
        ("it's Monday btw", None),
        ("its Tuesday and I'm tired", None),
    ],
)
def test_its_a_name_by_the_way(sentence: str, name: str | None) -> None:
    names = [f.value for f in rule_facts([sentence]) if f.kind == "name"]
    assert names == ([name] if name else [])


def test_been_living_somewhere_for_years_is_home() -> None:
    facts = rule_facts(["been living in Vancouver 6 yrs now and still not used to the rain"])
    assert [(f.kind, f.value) for f in facts if f.kind == "home"] == [("home", "Vancouver")]


@pytest.mark.parametrize(
    ("sentence", "style"),
    [
        ("Evidence-based answer please, I'm writing a short article.", None),
        ("I'd like a proper answer rather than the usual internet arguments.", None),
        ("Please keep your answers short from now on.", "keep your answers short from now on"),
        ("I prefer a short answer, always.", "I prefer a short answer"),
        ("just give me the short answer, I hate long replies", "I hate long replies"),
    ],
)
def test_one_answer_asked_for_is_no_way_of_answering(sentence: str, style: str | None) -> None:
    said = [f.value for f in rule_facts([sentence]) if f.kind == "communication"]
    assert said == ([style] if style else [])


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("alright its Declan the plumber again", [("name", "Declan", ""), ("work", "plumber", "")]),
        ("hi its Jon, cabbie in Nottingham.", [("name", "Jon", ""), ("work", "cabbie", "")]),
        ("mechanic, 20 yrs in the trade.", [("work", "mechanic", "")]),
        (
            "I'm a machine operator at a crisp factory, 4 on 4 off.",
            [("work", "machine operator", "")],
        ),
        ("me n the missus Rukhsana r saving for a deposit", [("family", "missus", "Rukhsana")]),
        ("it's Christmas, so I'm off work", []),
        ("its just me again lol", []),
    ],
)
def test_chat_says_names_jobs_and_partners_its_own_way(
    sentence: str, facts: list[tuple[str, str, str]]
) -> None:
    assert [(f.kind, f.value, f.name) for f in rule_facts([sentence])] == facts


@pytest.mark.parametrize(
    "sentence",
    [
        "My mum forwarded me this and I don't know how to reply without upsetting her:",
        "Answers underneath please.",
        "can you help me with replying to customers, I never know what to say",
    ],
)
def test_replies_of_the_writer_s_own_are_no_way_of_answering(sentence: str) -> None:
    assert [f for f in rule_facts([sentence]) if f.kind == "communication"] == []


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("packed lunch ideas pls, I only eat halal so no pork obvs", [("diet", "halal", "")]),
        ("on nights this week so ill be up at weird times", [("routine", "nights", "")]),
        ("been on earlies since march", [("routine", "earlies", "")]),
        ("on days like this I just stay in", []),
    ],
)
def test_diets_and_shifts_said_in_chat(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert [(f.kind, f.value, f.name) for f in rule_facts([sentence])] == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("dentist on the 24th at 4, can you write a txt to mr patel", [("plan", "dentist")]),
        ("got me MOT tomorrow", [("plan", "mot")]),
        ("pescatarian so fish is fine, what's a cheap dinner", [("diet", "pescatarian")]),
        ("coeliac here so gluten free is a must", [("condition", "coeliac")]),
        ("doctor said I should rest", []),
        ("vegetarian lasagne is the best thing on the menu", []),
    ],
)
def test_appointments_and_diets_said_first(sentence: str, facts: list[tuple[str, str]]) -> None:
    assert [(f.kind, f.value) for f in rule_facts([sentence])] == facts
