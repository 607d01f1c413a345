"""Replies speak to the user ("Your sister…", also while streaming), and small talk
is not stored or learned as a fact."""

from __future__ import annotations

import json

import pytest

from memagent.agent import Agent
from memagent.agent.voice import is_small_talk, stable_prefix, to_user
from memagent.core import MemoryHome
from memagent.llm import ScriptedLLM


@pytest.mark.parametrize(
    ("reply", "message", "want"),
    [
        ("My sister is Ann.", "What is my sister called?", "Your sister is Ann."),
        ("I work at Acme.", "Where do I work?", "You work at Acme."),
        ("So I work at Acme.", "Where do I work?", "So you work at Acme."),
        ("Noted: my cat is Pixel.", "My cat is Pixel", "Noted: your cat is Pixel."),
        # only the user's own pairs: the assistant speaking of itself stays
        ("I think my sister is Ann.", "What is my sister called?", "I think your sister is Ann."),
        (
            "I don't have that in memory.",
            "I don't know, where do I live?",
            "I don't have that in memory.",
        ),
        ("Paris is the capital.", "What is the capital of France?", "Paris is the capital."),
        # quotes of the user's "I'm / I am / I was / I've / I'll", verb turned too
        (
            "Noted: I'm allergic to penicillin.",
            "I'm allergic to penicillin",
            "Noted: you're allergic to penicillin.",
        ),
        ("Noted: I am allergic.", "I'm allergic to cats", "Noted: you are allergic."),
        ("Noted: I’m vegan.", "i’m vegan now", "Noted: you’re vegan."),
        ("I was born in Oslo.", "I was born in Oslo", "You were born in Oslo."),
        ("Got it, I've moved.", "I've moved to Rome", "Got it, you've moved."),
        ("OK: I'll call Ann.", "I'll call Ann later", "OK: you'll call Ann."),
        ("I am here to help.", "I am tired", "I am here to help."),
        ("I'm glad. I'm tired too?", "I'm tired", "I'm glad. You're tired too?"),
    ],
)
def test_to_user(reply: str, message: str, want: str) -> None:
    assert to_user(reply, message) == want


def test_streamed_prefixes_only_grow_and_end_as_the_whole_reply() -> None:
    message = "What is my sister called and where do I live?"
    full = "My sister is Ann and I live in Oslo; my dog is Rex."
    shown = ""
    for i in range(1, len(full) + 1):
        now = stable_prefix(full[:i], message)
        assert now.startswith(shown)
        shown = now
    assert to_user(full, message).startswith(shown)
    assert to_user(full, message) == "Your sister is Ann and you live in Oslo; my dog is Rex."


def test_streamed_contractions_never_show_the_unturned_verb() -> None:
    message = "I'm allergic to penicillin and I was born in May"
    full = "Noted: I am allergic to penicillin, and I was born in May."
    shown = ""
    for i in range(1, len(full) + 1):
        now = stable_prefix(full[:i], message)
        assert now.startswith(shown) and "I am" not in now and "I was" not in now
        shown = now
    want = "Noted: you are allergic to penicillin, and you were born in May."
    assert to_user(full, message) == want and want.startswith(shown)


@pytest.mark.parametrize(
    "text", ["Hello!", "hi there", "Thanks a lot!", "ok", "Good morning :)", "bye"]
)
def test_small_talk(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    ["My sister is Ann", "Hello, my name is Bob", "How are you?", "ok " * 50, "I am ok", "", "12"],
)
def test_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)


def test_small_talk_is_not_stored_as_a_fact(home: MemoryHome) -> None:
    llm = ScriptedLLM([json.dumps({"reply": "Hi! How can I help?"})])
    with Agent(home, llm, prompt_set="instruct", learn_profile=True, embeddings=False) as a:
        r = a.turn("Hello!")
        msgs = list(a.conversation.messages)
    assert r.ok and len(llm.calls) == 1  # no profile learning call either
    assert "Small talk" in llm.calls[0].messages[-1].content
    assert not list(home.layout.chunks.rglob("chunk-*.json"))
    assert [m.content for m in msgs] == ["Hello!", "Hi! How can I help?"]  # the record keeps it


def test_replies_speak_to_the_user_also_when_streamed(home: MemoryHome) -> None:
    llm = ScriptedLLM([json.dumps({"reply": "My sister is Ann."})] * 2)
    # memory holds nothing on a sister: the honesty checks would refuse; this test
    # is about the voice of whatever the model replies
    no_checks = home.config.agent.model_copy(update={"focus_check": False, "chat_verify_min": 0})
    with Agent(
        home,
        llm,
        config=no_checks,
        prompt_set="instruct",
        learn_profile=False,
        embeddings=False,
        record=False,
    ) as a:
        assert a.turn("What is my sister called?").reply == "Your sister is Ann."
        pieces: list[str] = []
        r = a.turn("What is my sister called?", on_text=pieces.append)
    assert r.reply == "Your sister is Ann." and "".join(pieces) == "Your sister is Ann."


@pytest.mark.parametrize("prompt_set", ["instruct", "json"])
def test_every_mode_turns_a_quoted_statement(home: MemoryHome, prompt_set: str) -> None:
    llm = ScriptedLLM([json.dumps({"reply": "Noted: I'm allergic to penicillin."})])
    with Agent(
        home, llm, prompt_set=prompt_set, learn_profile=False, embeddings=False, record=False
    ) as a:
        pieces: list[str] = []
        r = a.turn("I'm allergic to penicillin.", on_text=pieces.append)
    assert r.reply == "Noted: you're allergic to penicillin."
    assert "".join(pieces) == r.reply
