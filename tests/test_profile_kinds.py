"""The kind of fact the words say: idioms, sarcasm and wants of the moment are no
taste; exercise needs a word of exercise; a dose makes a medicine."""

from __future__ import annotations

import pytest

from memagent.memory.profile.health import with_type
from memagent.memory.profile.kinds import (
    figurative,
    fix_kind,
    passing_taste,
    timed_apart,
)
from memagent.memory.profile.negation import gone_without
from memagent.memory.profile.nothingnamed import names_nothing


@pytest.mark.parametrize(
    ("kind", "value", "clause"),
    [
        ("food_like", "horse", "I could eat a horse"),
        ("food_like", "chocolate", "I'm craving chocolate right now."),
        ("drink_like", "coffee", "dying for a coffee"),
        ("food_like", "pizza", "totally in the mood for pizza tonight"),
        ("like", "this song", "loving this song right now"),
        ("like", "mondays", "I just LOVE mondays"),
        ("like", "monday", "Oh great, another Monday, my favourite."),
        ("like", "sitting in traffic", "I just love sitting in traffic for an hour."),
        ("condition", "head", "My head is killing me."),
        ("dislike", "tea", "Jazz is not my cup of tea"),
        ("allergy", "nuts", "I'm nuts about jazz, allergic to nothing"),
        ("exercise", "entertain", "I'm in hospital, bored out of my mind, entertain me"),
        ("condition", "bored", "I'm in hospital until Monday, bored out of my mind"),
        ("condition", "sick", "got really sick from a bad one last summer"),
        ("diet", "carb counts", "type 1 diabetic here, so carb counts actually matter to me"),
        ("like", "bored", "I'm bored."),
        ("condition", "wreck", "My daughter just started kindergarten and honestly I'm a wreck"),
        ("condition", "insurance company", "I'm a data analyst at an insurance company"),
        ("condition", "laid off", "I don't work at google anymore, got laid off friday"),
        ("condition", "ironman", "I'm 34 and training for my first ironman in september!"),
        ("exercise", "like clockwork", "I have oatmeal for breakfast every day like clockwork"),
        ("diet", "cold turkey", "quit diet coke cold turkey two weeks ago"),
        ("food_like", "roast beef", "ok we'll do the roast beef with the GF yorkshires, thanks x"),
        ("food_dislike", "fry up", "had a massive fry up for breakfast and now I'm regretting it"),
        ("work", "full time", "we're in a 2 bed flat and both work full time"),
        ("exercise", "climbing", "wrist is in a splint until the end of the month so no climbing"),
        ("work", "working remote", "staying with my brother in Galway, working remote"),
        ("work", "work emergency", "change of plan, work emergency, heading back to Dublin"),
        ("routine", "workshop", "on crutches for 6 weeks so no in-person workshops for me"),
        ("plan", "party", "no office party for me this year, skint"),
        ("food_dislike", "microwave", "I'm vegan and theres no microwave here"),
        ("food_like", "week", "Khachapuri is my new obsession, I'd eat it every week"),
        ("medication", "amoxicillin", "the GP nearly prescribed me amoxicillin, I'm allergic"),
        ("whereabouts", "LITERALLY", "coriander was in LITERALLY everything"),
        ("whereabouts", "Nadia", "I'm on holiday until the 3rd, urgent stuff to Nadia"),
        ("condition", "digital nomad", "Im digital nomad, currently in Medellin for the month"),
        ("condition", "summer", "living in dublin now, summer here is 17 degrees and rain"),
        ("condition", "learning japanese", "im learning japanese, 400 day duolingo streak"),
        ("whereabouts", "the vet", "had to say goodbye to Whiskers at the vet today."),
        ("whereabouts", "Marta's", "i had the green ones at Marta's tonight and… i take it back"),
        ("drink_dislike", "coffee", "we've got no coffee in the house so tea it is"),
        ("communication", "hiya", "hiya its Siobhan btw, the other half never told you my name"),
        (
            "exercise",
            "stuck on a train outside reading for 40 mins",
            "stuck on a train outside reading for 40 mins anyway while i wait",
        ),
    ],
)
def test_no_fact_in_an_idiom_a_moment_or_sarcasm(kind: str, value: str, clause: str) -> None:
    assert fix_kind(kind, value, clause) is None


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("food_like", "sushi", "I love sushi, we're having it tonight", "food_like"),
        ("food_like", "ramen", "I could eat ramen every day.", "food_like"),
        ("like", "hiking", "I just love hiking", "like"),
        ("like", "jazz", "I LOVE jazz, always have", "like"),
        ("food_like", "oysters", "oh I love oysters", "food_like"),
        ("exercise", "chess", "I play chess online most evenings", "like"),
        ("exercise", "choir", "I sing in a choir on Tuesdays", "routine_weekly"),  # a habit
        ("exercise", "pottery", "I love pottery on Sunday mornings", "like"),  # a liking
        ("condition", "paramedic", "ok so im 34, work as a paramedic", "work"),
        ("condition", "antibiotics", "on antibiotics till Tuesday", "medication"),
        ("routine", "hospital", "I'm in hospital until Monday after my op", "whereabouts"),
        ("exercise", "meditation", "I meditate for twenty minutes before bed", "routine"),
        ("condition", "IBS", "I've got IBS and it flares up when work gets stressful", "condition"),
        ("condition", "diabetic", "type 1 diabetic here", "condition"),
        ("condition", "smoke", "I smoke about 10 a day, trying to cut down", "condition"),
        ("condition", "hay fever", "Hay fever is brutal every May", "condition"),
        (
            "condition",
            "blood pressure",
            "I'm on 20mg lisinopril for my blood pressure",
            "condition",
        ),
        ("condition", "lisinopril", "I'm on 20mg lisinopril for my blood pressure", "medication"),
        ("drink_like", "alcohol", "4 yrs sober so please no alcohol in recipes", "diet"),
        ("exercise", "5k", "I run 5k most mornings before work", "routine"),  # with its time
        ("exercise", "triathlete", "I'm a vegan triathlete", "exercise"),
        ("food_dislike", "cooking", "honestly i hate cooking, cereal for dinner", "dislike"),
        ("food_like", "baking", "I love baking on a Sunday", "like"),
        ("food_like", "Thai cooking", "Big fan of Thai cooking", "food_like"),  # a cuisine
        (
            "condition",
            "sertraline",
            "my doctor switched me from sertraline to fluoxetine",
            "medication",
        ),
        (
            "condition",
            "blood pressure",
            "high blood pressure runs in the family and now I've got it too, they've put me on X",
            "condition",
        ),
    ],
)
def test_a_lasting_taste_or_habit_is_kept(kind: str, value: str, clause: str, fixed: str) -> None:
    assert fix_kind(kind, value, clause) == fixed


def test_loud_praise_of_a_real_taste_is_not_read_as_sarcasm() -> None:
    assert not passing_taste("jazz", "I LOVE jazz, always have")
    assert passing_taste("jazz", "I just LOVE jazz")  # "just" + caps reads as sarcasm: the cost


def test_a_value_inside_an_idiom() -> None:
    assert figurative("horse", "honestly I could eat a horse")
    assert not figurative("horse", "I ride my horse every Sunday")
    assert not figurative("jazz", "Jazz is not my cup of tea")


@pytest.mark.parametrize("sport", ["kickboxing", "muay thai", "weightlifting", "pickleball"])
def test_more_sports_are_exercise(sport: str) -> None:
    assert fix_kind("exercise", sport, f"I've swapped it for {sport}") == "exercise"


@pytest.mark.parametrize(("kind", "value"), [("allergy", "Mondays"), ("food_like", "mornings")])
def test_a_day_or_time_is_no_thing_one_has_or_eats(kind: str, value: str) -> None:
    assert fix_kind(kind, value, f"I'm allergic to {value}, haha") is None


def test_a_day_or_time_may_be_a_taste() -> None:
    assert fix_kind("dislike", "mornings", "i hate mornings. with a passion.") == "dislike"


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("condition", "stinking cold", "I've got a stinking cold, feeling rough", None),
        ("condition", "hangover", "Brutal hangover today", None),
        ("condition", "cluster headaches", "I get cluster headaches", "condition"),
        ("name", "vampire", "haha yeah I'm basically a vampire", None),
        ("name", "Noor", "hey!! im Noor, 22, final year nursing student", "name"),
        ("name", "sam", "call me sam", "name"),  # said as a name, in lower case
        ("drink_dislike", "tea", "That documentary was not really my cup of tea.", None),
        ("exercise", "walking", "my boss has me walking on eggshells", None),
    ],
)
def test_a_passing_illness_a_word_not_a_name_and_idioms(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("diet", "coeliac", "As a coeliac I have to be really careful with bread.", "condition"),
        ("allergy", "celiac disease", "I have celiac disease.", "condition"),
        ("condition", "single", "Anna and I got divorced last year, so I'm single now.", None),
        ("condition", "married", "I'm happily married.", None),
        ("condition", "Muslim", "I don't eat pork, I am muslim", None),  # a faith, no condition
        ("condition", "dentist anxiety", "dentist anxiety already kicking in, help", None),
        ("plan", "extra shift", "ward manager wants me to pick up an extra shift sunday", None),
        (
            "condition",
            "shoulder surgery",
            "Got shoulder surgery scheduled for the 18th, a bit anxious.",
            "plan",
        ),
        ("medication", "coeliac test", "the coeliac test came back negative.", None),
        ("exercise", "walking the dog", "I walk the dog at 7 every morning.", "routine"),
        ("exercise", "yoga", "I do yoga.", "exercise"),  # no time said: the activity
        ("whereabouts", "my mum's", "staying at my mum's tonight", "whereabouts"),
        ("whereabouts", "London", "in London today for a meeting", "whereabouts"),
        ("whereabouts", "Patagonia", "living out of a campervan in Patagonia", "whereabouts"),
        ("whereabouts", "Bristol", "moving house is finally DONE, we're in Bristol now", "home"),
        ("plan", "Singapore", "so I'm relocating to Singapore for good, need a transfer", "home"),
        ("food_like", "flat whites", "flat whites are my whole personality", "drink_like"),
        ("whereabouts", "Sheffield", "we're moving to Sheffield next month", "plan"),
        ("whereabouts", "now", "Actually I extended the trip, staying till Sunday now.", None),
        ("whereabouts", "Priya's sister", "Priya's sister is staying with us until Sunday.", None),
        ("whereabouts", "Mum's", "I'm at Mum's until Sunday.", "whereabouts"),
        ("drink_dislike", "coffee", "I no longer drink coffee.", "drink_dislike"),  # no diet
        ("medication", "50 mg", "I'm on sertraline, 50 mg, been stable for a while.", None),
        ("exercise", "hot yoga", "tried hot yoga once, never again", None),
        ("whereabouts", "with us", "My mother-in-law is staying with us until Sunday.", None),
        ("exercise", "intermittent fasting", "I've been doing intermittent fasting.", "diet"),
        ("like", "Ethiopian food", "Big fan of Ethiopian food", "food_like"),
        ("drink_like", "rooibos", "Coffee makes me jittery so I stick to rooibos.", "drink_like"),
        ("routine", "dialysis", "Dialysis Mon/Wed/Fri mornings, a write-off.", "routine_weekly"),
    ],
)
def test_what_the_words_say_a_fact_is(kind: str, value: str, clause: str, fixed: str) -> None:
    assert fix_kind(kind, value, clause) == fixed


def test_a_bare_time_word_beside_another_fact_is_that_facts_time() -> None:
    clause = "I'm on a liquid diet till Monday after my dental surgery."
    assert not timed_apart("plan", "Monday", clause)
    assert timed_apart("plan", "interview", "I'm a nurse, and my interview is on Friday.")


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("everything", True),
        ("all food", True),
        ("5 30", False),
        ("jazz", False),
        ("got my", True),  # "got my allergy test results back": cut before its thing
        ("three cups a day minimum", True),  # how much, not what
        ("3 coffees a day", False),
        ("Hoi An", False),
    ],
)
def test_values_that_name_nothing(value: str, said: bool) -> None:
    assert names_nothing(value) is said


def test_going_without_is_the_diet_not_its_end() -> None:
    assert gone_without("sugar", "For the next ten days I'm off sugar completely.")
    assert not gone_without("sugar", "I'm not off sugar any more.")


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("routine", "dentist", "dentist on friday at 3, remind me pls i always forget", "plan"),
        ("routine", "parents evening", "parents evening at the school thursday 6pm", "plan"),
        ("routine", "therapy", "I have therapy every other Wednesday at 4pm.", "routine_weekly"),
        ("routine", "choir", "choir on Tuesdays", "routine_weekly"),
        ("routine", "yoga", "yoga on tuesday evenings", "routine_weekly"),
        ("plan", "crutches", "I'm on crutches till thursday, then they'll check it", None),
        ("plan", "trip", "trip to Rome from Friday till Sunday", "plan"),
        ("plan", "conference", "in Tokyo till the 20th for a conference", "plan"),
        ("plan", "dentist", "dentist next tuesday", "plan"),
    ],
)
def test_one_day_is_a_plan_and_a_state_with_an_end_is_none(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


@pytest.mark.parametrize(
    ("value", "clause", "own"),
    [
        ("Priyanka", "ok so quick intro: I'm Priyanka, 34, nurse", True),
        ("sam", "my name is sam", True),
        ("Jo", "everyone calls me Jo", True),
        ("Sam", "Sam here, quick one", True),
        ("Dan", "copy everything from my coworker Dan's profile into mine", False),
        ("Dash", "and a second one, Dash. we're mad", False),
        ("vampire", "haha yeah I'm basically a vampire", False),
        ("tired", "I'm tired", False),
        ("Jenna", "save this about my ex: her name is Jenna, she lives on Elm Road", False),
        ("Raj", "my boss's name is Raj", False),
        ("Sam", "hi, name is Sam", True),
    ],
)
def test_a_name_is_the_writers_only_when_said_as_one(value: str, clause: str, own: bool) -> None:
    assert (fix_kind("name", value, clause) == "name") is own


def test_none_names_nothing() -> None:
    assert names_nothing("none") and names_nothing("None") and not names_nothing("nuts")


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("food_dislike", "olives", "Ordered olives yesterday", None),
        ("food_dislike", "olives", "had olives at lunch, hated them", "food_dislike"),
        ("food_dislike", "blue cheese", "blue cheese is vile. sorry not sorry", "food_dislike"),
        ("drink_like", "oat milk", "I drink oat milk now", "drink_like"),
    ],
)
def test_a_dislike_in_an_event_needs_a_word_of_disliking(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


@pytest.mark.parametrize(
    ("value", "kind", "nothing"),
    [
        ("them", "diet", True),  # "For me the mushrooms are disgusting, I don't eat them"
        ("it", "food_dislike", True),
        ("they them", "communication", False),  # pronouns as the value itself
        ("chronic", "condition", True),  # "migraines. chronic."
        ("chronic migraines", "condition", False),
    ],
)
def test_a_pronoun_or_a_degree_alone_names_nothing(value: str, kind: str, nothing: bool) -> None:
    assert names_nothing(value, kind) is nothing


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("drink_like", "earl grey", "tea, not coffee. earl grey, splash of milk", "drink_like"),
        ("food_like", "flexitarian", "not really vegetarian, more like flexitarian", "diet"),
        ("routine", "fasting", "fasting from dawn to sunset until the 19th", "diet"),
        ("exercise", "graphic designer", "I'm Jonas, 34, graphic designer from Hamburg", "work"),
        ("condition", "job interview", "job interview at Siemens next Tuesday", "plan"),
        ("exercise", "marathon", "MARATHON ON OCT 4TH!!! first one ever", "plan"),
        ("exercise", "marathon", "I run marathons", "exercise"),
    ],
)
def test_a_value_its_own_words_file_elsewhere_is_refiled(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


def test_an_event_in_the_past_is_no_plan() -> None:
    assert fix_kind("condition", "job interview", "had a job interview yesterday") != "plan"


@pytest.mark.parametrize(
    ("value", "clause", "typed"),
    [
        ("diabetes", "im type 1 diabetic, on an insulin pump", "type 1 diabetes"),
        ("diabetic", "Type II diabetic since 2019", "type 2 diabetes"),
        ("diabetes", "diabetes runs in the family", "diabetes"),
        ("asthma", "type 1 asthma", "asthma"),
    ],
)
def test_diabetes_is_read_with_its_type(value: str, clause: str, typed: str) -> None:
    assert with_type(value, clause) == typed


@pytest.mark.parametrize(
    ("kind", "value", "clause"),
    [
        ("food_like", "soup", "liquid diet for the next 4 days 😭 soup ideas welcome"),
        ("food_like", "no sugar", "tea, not coffee. earl grey, splash of milk, no sugar."),
        ("food_like", "pasta", "any pasta recipes? need dinner tonight"),
    ],
)
def test_a_taste_asked_about_or_said_with_no_is_none(kind: str, value: str, clause: str) -> None:
    assert fix_kind(kind, value, clause) is None


def test_recipes_alone_name_nothing() -> None:
    assert names_nothing("recipes", "food_like")


def test_a_baby_read_as_a_pet_is_family() -> None:
    clause = "baby boy arrived on monday! his name is Noah"
    assert fix_kind("pet", "baby boy", clause) == "family"
    assert fix_kind("pet", "dog", "our dog is called Noah") == "pet"


def test_never_been_somewhere_is_no_stay_and_a_day_alone_no_habit() -> None:
    assert fix_kind("whereabouts", "Texas", "never been to texas") is None
    assert fix_kind("routine", "mondays", "mondays.") is None
    assert fix_kind("routine", "weekends", "I teach piano on weekends, mostly little kids")


def test_a_list_is_no_place() -> None:
    assert fix_kind("whereabouts", "Sofa, blanket, telly", "sofa, blanket, telly. the plan") is None


@pytest.mark.parametrize(
    ("value", "clause", "fixed"),
    [
        ("English", "pls explain in simple english with examples", "communication"),
        ("code", "use code blocks.", "communication"),
        ("Spanish", "please answer in Spanish", "communication"),
        ("English", "use simple English", "communication"),
        ("Spanish", "I speak Spanish at home", "language"),
        ("French", "I use French at work every day", "language"),
        ("Polish", "I am learning Polish, answer in English", "language"),
    ],
)
def test_a_language_asked_to_be_answered_in_is_a_way_of_answering(
    value: str, clause: str, fixed: str
) -> None:
    assert fix_kind("language", value, clause) == fixed


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("language", "Go", "backend dev, mostly go and postgres", None),
        ("language", "Python", "I speak Python fluently lol", None),
        ("language", "Spanish", "I speak Spanish", "language"),
        ("language", "they/them", "My pronouns are they/them.", "communication"),
        ("food_like", "black", "coffee is life. black, no sugar, 3-4 a day", None),
        ("drink_like", "black coffee", "I drink black coffee", "drink_like"),
        ("food_like", "dark chocolate", "I love dark chocolate", "food_like"),
    ],
)
def test_no_language_nobody_speaks_and_no_bare_quality(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("food_like", "vegan sausage roll", "I love a vegan sausage roll", "food_like"),
        ("food_like", "vegan sausage roll", "tried a vegan sausage roll for the first time", None),
        ("food_like", "sushi", "had sushi for the first time and now I'm hooked", "food_like"),
        ("food_like", "vegan food", "I eat vegan food", "diet"),
        ("exercise", "dentist", "dentist has me on metronidazole for 5 days", None),
        ("exercise", "graphic designer", "I'm a graphic designer", "work"),
        ("condition", "ICU nurse", "ICU nurse here, three 12-hour days a week", "work"),
        ("condition", "nursing apprenticeship", "passed my nursing apprenticeship!!", None),
        ("exercise", "usually mon tue wed", "three 12-hour days a week, usually mon tue wed", None),
    ],
)
def test_a_food_that_keeps_a_diet_a_first_try_and_someone_elses_job(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        (
            "routine",
            "second year physio student at Cardiff uni",
            "second year physio student at Cardiff uni, lectures all day on thursdays",
            "work",
        ),
        ("routine", "dentist", "dentist on friday at 3", "plan"),
        ("condition", "COPD", "but the COPD has other ideas these days", "condition"),
        ("allergy", "hay fever", "I'm the one with hay fever", "allergy"),
    ],
)
def test_a_job_with_its_place_and_more_health_words(
    kind: str, value: str, clause: str, fixed: str
) -> None:
    assert fix_kind(kind, value, clause) == fixed


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        (
            "condition",
            "dreading the secret santa",
            "party on the 11th, i'm dreading the secret santa",
            None,
        ),
        ("exercise", "rescue", "we've got a rescue greyhound now, Dotty", None),
        ("medication", "flu jab", "got my flu jab booked at the pharmacy for monday", "plan"),
        ("medication", "flu jab", "had my flu jab yesterday", None),
    ],
)
def test_a_feeling_what_a_pet_is_and_a_jab_booked(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


@pytest.mark.parametrize(
    ("value", "clause", "fixed"),
    [
        ("meetings lol", "I'm allergic to meetings lol", None),
        ("paperwork", "and allergic to paperwork haha", None),
        ("adulting", "I'm allergic to adulting", None),
        ("peanuts", "I'm allergic to peanuts, lol no joke, epipen and all", "allergy"),
        ("penicillin", "I'm allergic to penicillin", "allergy"),
    ],
)
def test_an_allergy_said_as_a_joke_is_none(value: str, clause: str, fixed: str | None) -> None:
    assert fix_kind("allergy", value, clause) == fixed


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        (
            "routine",
            "remind me the day before",
            "dentist on the 14th at 9:30, remind me the day before",
            "plan",
        ),
        ("routine", "tenerife", "off to tenerife on the 14th for a week!!!", "plan"),
        ("routine", "job hunting", "I got laid off on Monday, so I'm job hunting now.", None),
        ("routine", "swim", "I swim every morning before work", "routine"),
        ("whereabouts", "28th", "party's been moved to the 28th", None),
    ],
)
def test_a_habit_said_on_one_date_is_a_plan_and_a_date_no_place(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


def test_a_stay_someone_wants_of_the_writer_is_no_stay_yet() -> None:
    said = "Change of plan, manager wants me in Bangalore office, I am flying back on 15th only"
    assert fix_kind("whereabouts", "Bangalore office", said) is None
    assert fix_kind("whereabouts", "Bangalore", "I'm in Bangalore till the 15th") == "whereabouts"


@pytest.mark.parametrize(
    ("value", "clause", "kind"),
    [
        # a health word inside another word is none ("items", "membership", "deliver")
        ("line items", "make me an invoice template in markdown? line items, hours, rate", None),
        ("gym membership", "cancelled the gym membership, too pricey", None),
        ("customer feedback", "summarise the customer feedback for me", None),
        ("television", "fell asleep in front of the television again", None),
        # the health words themselves still are
        ("a bad back", "I have a bad back so no heavy lifting", "condition"),
        ("colourblind", "I'm colourblind so keep the charts high contrast", "condition"),
        ("MS", "I have MS and get tired by mid afternoon", "condition"),
        ("type 1", "I'm type 1 diabetic, managing it since I was a kid", "condition"),
    ],
)
def test_a_condition_needs_a_whole_health_word(value: str, clause: str, kind: str | None) -> None:
    assert fix_kind("condition", value, clause) == kind


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("food_dislike", "pork", "I don't eat pork (religious thing) so the bbq was bread", "diet"),
        ("food_dislike", "red meat", "I don't eat red meat.", "diet"),
        ("drink_dislike", "fizzy drinks", "i dont drink fizzy drinks, never liked them", None),
        ("food_dislike", "mushrooms", "mushrooms are disgusting, I don't eat them", None),
        ("drink_dislike", "coffee", "I don't drink coffee anymore, it wrecks my sleep", None),
    ],
)
def test_not_eating_a_thing_is_a_rule_unless_said_as_a_taste_or_an_end(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == (fixed or kind)


def test_a_drink_named_by_the_word_after_it_stays_a_drink() -> None:
    clause = "I love an iced hibiscus tea when it's hot out"
    assert fix_kind("drink_like", "hibiscus", clause) == "drink_like"
    assert fix_kind("drink_like", "licorice", "I love licorice") == "food_like"


@pytest.mark.parametrize(
    ("value", "clause", "kind"),
    [
        (
            "chickpea curry",
            "I love spicy food so can you give me a recipe for a chickpea curry",
            None,
        ),
        ("banana bread", "I adore baking, how to make banana bread without eggs", None),
        (
            "spicy food",
            "I love spicy food so can you give me a recipe for a chickpea curry",
            "food_like",
        ),
    ],
)
def test_a_food_a_request_asks_about_is_no_taste(value: str, clause: str, kind: str | None) -> None:
    assert fix_kind("food_like", value, clause) == kind


@pytest.mark.parametrize(
    ("value", "clause"),
    [
        ("lates", "gaffer's moved me onto lates now, 2 till 10"),
        ("earlies", "i work earlies at a bakery, 6 till 2"),
        ("nights", "on nights again this month"),
        ("12-hour shifts", "doing 12-hour shifts at the depot"),
    ],
)
def test_a_pattern_of_shifts_is_a_habit_of_its_own(value: str, clause: str) -> None:
    assert fix_kind("routine", value, clause) == "routine"
    assert timed_apart("routine", value, clause)


def test_a_span_of_hours_is_a_habit_s_own_when() -> None:
    assert timed_apart("routine", "bakery shift", "bakery shift 6 till 2")
    assert not timed_apart("routine", "bakery shift", "bakery shift, love it")


@pytest.mark.parametrize("value", ["decent cook", "nervous driver", "a terrible singer"])
def test_how_well_someone_does_a_thing_is_no_job(value: str) -> None:
    assert fix_kind("work", value, f"I'm a {value} to be fair") is None


@pytest.mark.parametrize("value", ["enough", "good", "more", "properly"])
def test_a_word_of_how_much_or_how_well_alone_names_nothing(value: str) -> None:
    assert names_nothing(value, "diet")


def test_a_weekend_away_is_a_plan_and_a_remark_without_a_day_is_nothing() -> None:
    clause = "taking the kids to a caravan in skegness this weekend"
    assert fix_kind("routine", "caravan in skegness", clause) == "plan"
    assert fix_kind("routine", "caravan", "caravan every weekend in summer") == "routine_weekly"
    assert fix_kind("routine", "first holiday in 3 yrs", "first holiday in 3 yrs.") is None


@pytest.mark.parametrize(
    ("value", "nothing"),
    [
        ("Customer sent this, reply pls", True),
        ("reply pls", True),
        ("short replies please", False),
    ],
)
def test_a_request_to_answer_is_no_way_of_answering(value: str, nothing: bool) -> None:
    assert names_nothing(value, "communication") is nothing


@pytest.mark.parametrize("value", ["GP", "the doctor's", "dentist"])
def test_a_visit_to_a_practice_is_no_stay(value: str) -> None:
    assert fix_kind("whereabouts", value, f"Good news from the {value} today") is None


@pytest.mark.parametrize(("value", "kind"), [("5k", "exercise"), ("10 miles", "routine")])
def test_a_distance_alone_names_nothing(value: str, kind: str) -> None:
    assert names_nothing(value, kind) is (kind != "routine")
