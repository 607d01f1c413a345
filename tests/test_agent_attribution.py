"""Speaker attribution: a question about one speaker of an imported conversation
is answered only from lines by or about that person, and refused (without asking
the model) when what matches is another person's life."""

from __future__ import annotations

import json

from memagent.agent import Agent
from memagent.agent.attribution import attribute
from memagent.agent.recalled import RecalledMemory
from memagent.core import MemoryHome
from memagent.llm import ScriptedLLM
from memagent.memory.chunks import ChunkDraft, ChunkStore

DIALOGUE = [
    ("Melanie", "I ran a charity race for mental health last Saturday."),
    ("Caroline", "Wow, Mel! Your charity race sounds great. How did you feel after it?"),
    ("Melanie", "Thanks, Caroline! I'm starting to realize that self-care is really important."),
    ("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "That's awesome. Caroline's courage always inspires me."),
    ("Caroline", "My grandma gave me this necklace; she is from Sweden."),
]


def hit(speaker: str | None, text: str, score: float = 1.0) -> RecalledMemory:
    source = {"speaker": speaker} if speaker else {}
    content = f"{speaker}: {text}" if speaker else text
    return RecalledMemory.make(
        id=text[:20], kind="chunk", content=content, score=score, source=source
    )


HITS = [hit(s, t) for s, t in DIALOGUE]


def imported(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    store.create_many(
        [
            ChunkDraft(
                content=f"{speaker}: {text}",
                created_at=f"2023-05-08T13:56:{i:02d}+00:00",
                conversation_id="import:1",
                source={"kind": "import", "speaker": speaker},
            )
            for i, (speaker, text) in enumerate(DIALOGUE)
        ]
    )
    store.close()


def test_only_lines_by_or_about_the_named_speaker_stay() -> None:
    who = attribute(HITS, "Where did Caroline go yesterday?", k=10)
    assert who.named == ["Caroline"]
    kept = [h.content for h in who.hits]
    assert all(c.startswith("Caroline:") or "Caroline's courage" in c for c in kept)
    # "Thanks, Caroline!" speaks to her, it is not about her
    assert not any("self-care" in c for c in kept)
    assert not who.others_answer


def test_a_question_about_the_other_speakers_life_is_flagged() -> None:
    who = attribute(HITS, "What did Caroline realize after her charity race?", k=10)
    assert who.others_answer
    # the same question about the person who ran the race is not
    assert not attribute(
        HITS, "What did Melanie realize after her charity race?", k=10
    ).others_answer


def test_first_person_and_single_shared_words_do_not_refuse() -> None:
    hits = [
        hit("Melanie", "This book I read last year reminds me of you, Caroline!"),
        hit("Caroline", "I loved reading as a kid."),
        hit("Melanie", "I lean on my family a lot."),
    ]
    # Melanie's own reading, though she speaks to Caroline in the same sentence
    assert not attribute(hits, "What books has Melanie read?", k=10).others_answer
    # one shared word ("lean") is chance, not Caroline's political leaning
    assert not attribute(hits, "What would Caroline's political leaning be?", k=10).others_answer
    assert attribute(hits, "What did Caroline lean on a lot?", k=10).others_answer


def test_a_question_naming_both_speakers_is_never_refused() -> None:
    question = "Did Caroline and Melanie both run a charity race?"
    assert not attribute(HITS, question, k=10).others_answer


def test_nothing_named_keeps_every_line_and_lines_without_speaker_stay() -> None:
    assert attribute(HITS, "Who ran a charity race?", k=10).hits == HITS
    mixed = [*HITS, hit(None, "You said: my sister Ann lives in Oslo")]
    kept = attribute(mixed, "What did Caroline get from her grandma?", k=10).hits
    assert kept[-1].content.startswith("You said")


def test_hostile_names_are_matched_literally() -> None:
    odd = [hit("C.*(", "I like tea."), hit("Bob", "I like coffee.")]
    who = attribute(odd, "What does C.*( like?", k=10)
    assert who.named == ["C.*("] and [h.speaker for h in who.hits] == ["C.*("]
    assert attribute(odd, "x" * 5000, k=10).hits == odd


def test_the_agent_refuses_without_asking_the_model(home: MemoryHome) -> None:
    imported(home)
    llm = ScriptedLLM([json.dumps({"reply": "self-care is important"})])
    with Agent(home, llm, prompt_set="qa", learn_profile=False, embeddings=False) as a:
        r = a.turn("What did Caroline realize after her charity race?")
    assert r.ok and r.reply.startswith("I don't have that in memory")
    assert "Caroline" in r.reply and llm.calls == []


def test_the_agent_answers_from_the_named_speakers_lines(home: MemoryHome) -> None:
    imported(home)
    llm = ScriptedLLM([json.dumps({"reply": "Sweden"})])
    with Agent(home, llm, prompt_set="qa", learn_profile=False, embeddings=False) as a:
        r = a.turn("Where is Caroline's grandma from?")
    assert r.reply == "Sweden" and len(llm.calls) == 1
    prompt = llm.calls[0].messages[-1].content
    assert "Sweden" in prompt and "charity race" not in prompt


def test_a_named_speakers_line_only_about_the_one_spoken_to_is_withheld() -> None:
    hits = [
        hit("Jon", "Wow, you found the perfect spot for your store!"),
        hit("Jon", "You found a great spot, I'm so happy for you."),
        hit("Jon", "I found a studio by the water."),
        hit("Gina", "I opened my store last week."),
    ]
    kept = [h.content for h in attribute(hits, "What did Jon find for his store?", k=10).hits]
    # Jon speaking to Gina about her store is not about Jon; a sentence of his own stays
    assert kept == [hits[1].content, hits[2].content]
    # asked about both of them, Jon speaking to Gina is about a named person: it stays
    assert attribute(hits, "What did Jon and Gina find?", k=10).hits == hits


def test_the_model_never_sees_a_line_spoken_to_someone_else(home: MemoryHome) -> None:
    imported(home)
    llm = ScriptedLLM([json.dumps({"reply": "I don't have that in memory."})])
    with Agent(home, llm, prompt_set="qa", learn_profile=False, embeddings=False) as a:
        a.turn("How did Caroline feel after the race she ran?")
    prompt = llm.calls[0].messages[-1].content if llm.calls else ""
    # Caroline's "Your charity race sounds great. How did you feel after it?" is about Melanie
    assert "sounds great" not in prompt


def test_a_line_without_speaker_field_is_attributed_from_its_name_prefix() -> None:
    imported = {"kind": "import", "role": "user"}
    hits = [
        RecalledMemory.make(id="a", kind="chunk", content="Melanie: I ran a charity race.",
                      score=1.0, source=imported),
        RecalledMemory.make(id="b", kind="chunk", content="Caroline: I went to a support group.",
                      score=0.9, source=imported),
    ]  # fmt: skip
    got = attribute(hits, "What did Caroline do?", k=5)
    assert got.named == ["Caroline"] and [h.id for h in got.hits] == ["b"]
    other = RecalledMemory.make(
        id="c", kind="chunk", content="Melanie: hi", score=1.0, source={"kind": "cli"}
    )
    assert other.speaker is None


def test_an_interjection_is_not_a_name_a_speaker_is_spoken_to() -> None:
    from memagent.agent.attribution import split_by_subject

    line = hit("John", "Yeah, they offer a bunch, like yoga and kickboxing. Thanks, Maria!")
    about, others = split_by_subject(line, {"John"}, ["John", "Maria"])
    # "Yeah," opens the sentence but names no one: John says it of himself
    assert [s.strip() for s in about] == ["Yeah, they offer a bunch, like yoga and kickboxing."]
    assert [s.strip() for s in others] == ["Thanks, Maria!"]
    # a nickname that begins a speaker's name is a name ("Mel" for Melanie)
    line = hit("Caroline", "That sounds great, Mel!")
    about, others = split_by_subject(line, {"Caroline"}, ["Caroline", "Melanie"])
    assert not about and [s.strip() for s in others] == ["That sounds great, Mel!"]
    about, others = split_by_subject(line, {"Caroline"}, ["Caroline"])  # no Melanie: no name
    assert [s.strip() for s in about] == ["That sounds great, Mel!"] and not others


def test_a_question_tells_nothing_about_anyone() -> None:
    question = "What is one of Joanna's favorite movies?"
    asked = [
        hit("Joanna", "That sounds great! What's your favorite game or movie?"),
        hit("Joanna", "A few times. It's one of my favorites!"),
    ]
    # Joanna's question to Nate is not Nate's favourite movie: nothing answers better
    assert not attribute(asked, question, k=5).others_answer
    told = [*asked, hit("Nate", "My favorite movie is Inception, I watch it every year.")]
    # Nate saying his favourite movie does (the near miss is refused)
    assert attribute(told, question, k=5).others_answer
