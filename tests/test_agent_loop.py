"""The agent loop with the scripted model, in both modes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memagent.agent import Agent, Conversations
from memagent.core import InvalidInput, MemoryHome
from memagent.llm import Message, ScriptedLLM

DATED = r"- \[\d{1,2} [A-Z][a-z]+ \d{4}\] "


def step(**parts: Any) -> str:
    return json.dumps(parts)


def agent(home: MemoryHome, llm: ScriptedLLM, **kw: Any) -> Agent:
    kw.setdefault("learn_profile", False)
    kw.setdefault("embeddings", False)
    return Agent(home, llm, **kw)


def user_md(home: MemoryHome) -> str:
    return (home.layout.vault / "user.md").read_text(encoding="utf-8")


def last_user(call_messages: list[Message]) -> str:
    return [m for m in call_messages if m.role == "user"][-1].content


ADD_SISTER = step(
    think="note it",
    actions=[
        {
            "action": "update_file",
            "path": "user.md",
            "old_content": "## People\n",
            "new_content": "## People\n- Sister: Ana, lives in Lisbon\n",
        }
    ],
)


def test_remember_then_recall_in_a_new_conversation(home: MemoryHome) -> None:
    llm = ScriptedLLM([ADD_SISTER, step(reply="Noted: Ana lives in Lisbon.")])
    with agent(home, llm) as a:
        r = a.turn("Please remember that my sister Ana lives in Lisbon.")
        first_conv = a.conversation_id
    assert r.ok and r.reply == "Noted: Ana lives in Lisbon." and r.steps == 2
    assert "- Sister: Ana, lives in Lisbon" in user_md(home)
    # the action result went back to the model as a <result> message
    assert last_user(llm.calls[1].messages).startswith("<result>")
    assert '"ok": true' in last_user(llm.calls[1].messages)

    llm2 = ScriptedLLM([step(reply="Your sister Ana lives in Lisbon.")])
    with agent(home, llm2) as a:
        assert a.conversation_id != first_conv
        r2 = a.turn("Where does my sister live?")
    prompt = last_user(llm2.calls[0].messages)
    assert "Lisbon" in prompt  # user.md and the stored exchange are in context
    assert "Message: Where does my sister live?" in prompt
    assert r2.reply == "Your sister Ana lives in Lisbon."
    assert any(s.id == "user.md" for s in r2.memory_sources)
    assert any(s.kind == "chunk" for s in r2.memory_sources)


def test_answers_to_questions_do_not_come_back_as_memory(home: MemoryHome) -> None:
    llm = ScriptedLLM([step(reply="Your cat is called Leo.")])
    with agent(home, llm) as a:
        a.turn("What is my cat called?")
    chunks = list((home.layout.chunks).rglob("chunk-*.json"))
    assert len(chunks) == 1
    doc = json.loads(chunks[0].read_text(encoding="utf-8"))
    assert doc["content"] == "What is my cat called?"
    assert doc["source"]["reply"] == "Your cat is called Leo."  # kept, not searchable
    assert doc["source"]["role"] == "user" and doc["source"]["type"] == "question"
    from memagent.memory.chunks import ChunkStore

    assert ChunkStore(home, embeddings=False).recall("Leo") == []


def test_update_and_delete_on_request(home: MemoryHome) -> None:
    update = step(
        actions=[
            {
                "action": "update_file",
                "path": "user.md",
                "old_content": "lives in Lisbon",
                "new_content": "lives in Madrid",
            }
        ],
        reply="Updated: Madrid.",
    )
    delete = step(
        actions=[
            {
                "action": "update_file",
                "path": "user.md",
                "old_content": "- Sister: Ana, lives in Madrid\n",
                "new_content": "",
            }
        ],
        reply="Forgotten.",
    )
    llm = ScriptedLLM([ADD_SISTER, step(reply="Noted."), update, delete])
    with agent(home, llm) as a:
        a.turn("My sister Ana lives in Lisbon.")
        assert a.turn("Ana moved to Madrid.").reply == "Updated: Madrid."
        assert "lives in Madrid" in user_md(home) and "Lisbon" not in user_md(home)
        r = a.turn("Forget where my sister lives.")
    assert r.ok and r.steps == 1
    assert "Ana" not in user_md(home)


def test_forget_tool_deletes_stored_memories(home: MemoryHome) -> None:
    with agent(home, ScriptedLLM([step(reply="Noted.")])) as a:
        a.turn("My locker code is 4411.")
    chunk_ids = [p.stem for p in home.layout.chunks.rglob("chunk-*.json")]
    assert len(chunk_ids) == 1
    llm = ScriptedLLM(
        [
            step(actions=[{"action": "recall", "query": "locker code", "assign_to": "r"}]),
            step(actions=[{"action": "forget", "memory_id": chunk_ids[0]}], reply="Deleted."),
            step(reply="I don't know your locker code."),
        ]
    )
    with agent(home, llm) as a:
        assert a.turn("Delete my locker code from memory.").reply == "Deleted."
        assert chunk_ids[0] in last_user(llm.calls[1].messages)  # recall result fed back
        r = a.turn("What is my locker code?")
    assert "4411" not in last_user(llm.calls[2].messages)
    assert r.reply == "I don't know your locker code."


def test_failed_batch_is_rolled_back_and_retried(home: MemoryHome) -> None:
    before = user_md(home)
    bad = step(
        actions=[
            {"action": "append_file", "path": "user.md", "content": "- Likes tea\n"},
            {"action": "create_file", "path": "entities/tom.md", "content": "# Tom\n"},
            {"action": "update_file", "path": "user.md", "old_content": "NOPE", "new_content": "x"},
        ]
    )
    good = step(
        actions=[{"action": "append_file", "path": "user.md", "content": "- Likes tea\n"}],
        reply="Saved.",
    )
    llm = ScriptedLLM([bad, good])
    with agent(home, llm) as a:
        r = a.turn("I like tea.")
    feedback = last_user(llm.calls[1].messages)
    assert "whole batch was undone" in feedback and "old_content was not found" in feedback
    assert r.ok and r.reply == "Saved." and r.steps == 2
    assert user_md(home) == before + "- Likes tea\n"
    assert not (home.layout.vault / "entities" / "tom.md").exists()


def test_honest_reply_when_writes_keep_failing(home: MemoryHome) -> None:
    before = user_md(home)
    bad = step(
        actions=[
            {"action": "append_file", "path": "user.md", "content": "- x\n"},
            {"action": "read_file", "path": "../config.toml"},
        ]
    )
    llm = ScriptedLLM([bad, bad.replace("- x", "- y"), bad.replace("- x", "- z")])
    with agent(home, llm, max_steps=3) as a:
        r = a.turn("Save x.")
    assert not r.ok
    assert r.reply.startswith("I couldn't save that because")
    assert "the whole batch was undone" in r.reply
    assert user_md(home) == before


def test_invalid_json_unknown_action_and_loops_get_precise_errors(home: MemoryHome) -> None:
    llm = ScriptedLLM(
        [
            '{"reply": "unterminated',
            step(actions=[{"action": "launch_rockets"}]),
            step(actions=[{"action": "list_files"}]),
            step(actions=[{"action": "list_files"}]),
            step(reply="Done."),
        ]
    )
    with agent(home, llm, max_steps=6) as a:
        r = a.turn("List my notes.")
    msgs = [last_user(c.messages) for c in llm.calls[1:]]
    assert "not valid JSON" in msgs[0] and "line 1, column" in msgs[0]
    assert "unknown action 'launch_rockets'" in msgs[1] and "read_file" in msgs[1]
    assert "user.md" in msgs[2]  # list_files ran
    assert "repeated your previous response" in msgs[3]
    assert r.ok and r.reply == "Done." and r.steps == 5


def test_garbage_in_structured_mode_is_an_error_not_a_reply(home: MemoryHome) -> None:
    llm = ScriptedLLM(["lorem ipsum", "still not json"])
    with agent(home, llm, max_steps=2) as a:
        r = a.turn("Hi")
    assert not r.ok
    assert "not a JSON object" in r.reply
    assert "couldn't finish that within 2 steps" in r.reply


def test_tagged_text_protocol_when_unstructured(home: MemoryHome) -> None:
    llm = ScriptedLLM(
        [
            '<think>check</think><actions>[{"action": "check_file_exists", "path": "user.md"}]'
            "</actions>",
            "<reply>Yes, user.md exists.</reply>",
            "Plain answer without tags.",
        ]
    )
    with agent(home, llm, structured=False) as a:
        assert a.turn("Do I have notes?").reply == "Yes, user.md exists."
        assert a.turn("Hello").reply == "Plain answer without tags."
    assert llm.calls[0].response_schema is None
    shots = [m.content for m in llm.calls[0].messages if m.role == "assistant"]
    assert shots[0].startswith("<think>") and any("<reply>" in s for s in shots)


def test_schema_requested_and_examples_follow_it(home: MemoryHome) -> None:
    llm = ScriptedLLM([step(reply="ok")])
    with agent(home, llm) as a:
        a.turn("Hi")
    schema = llm.calls[0].response_schema
    assert schema is not None and set(schema["properties"]) == {"think", "actions", "reply"}
    import jsonschema

    for m in llm.calls[0].messages:
        if m.role == "assistant":
            jsonschema.validate(json.loads(m.content), schema)


def test_multi_step_task_with_planning(home: MemoryHome) -> None:
    llm = ScriptedLLM(
        [
            step(think="Plan: 1. create Tom's note 2. link him from user.md 3. reply"),
            step(
                actions=[{"action": "create_file", "path": "entities/tom.md", "content": "# Tom\n"}]
            ),
            step(
                actions=[
                    {
                        "action": "update_file",
                        "path": "user.md",
                        "old_content": "## People\n",
                        "new_content": "## People\n- [[entities/tom]]\n",
                    }
                ]
            ),
            step(think="Plan: note created and linked; reply now"),
            step(reply="Tom has a note and is linked from your profile."),
        ]
    )
    with agent(home, llm, planning_interval=2) as a:
        r = a.turn("Start a note about my colleague Tom and link it.")
    assert r.ok and r.steps == 3
    assert (home.layout.vault / "entities" / "tom.md").exists()
    assert "[[entities/tom]]" in user_md(home)
    planning_calls = [
        c for c in llm.calls if c.response_schema and c.response_schema.get("required") == ["think"]
    ]
    assert len(planning_calls) == 2  # before steps 1 and 3
    assert "create Tom's note" in llm.calls[1].messages[-1].content


def test_tool_discovery_json_mode(home: MemoryHome) -> None:
    def shout(text: str) -> str:
        """Make text upper-case, for emphasis."""
        return text.upper()

    llm = ScriptedLLM(
        [
            step(actions=[{"action": "shout", "text": "hi"}]),
            step(actions=[{"action": "search_tools", "query": "upper-case emphasis"}]),
            step(actions=[{"action": "load_tools", "names": ["shout"]}]),
            step(actions=[{"action": "shout", "text": "hi"}]),
            step(reply="HI"),
        ]
    )
    with agent(home, llm, tools=[shout]) as a:
        schema_before = json.dumps(a.schema())
        r = a.turn("Shout hi")
        schema_after = json.dumps(a.schema())
    feedback = [last_user(c.messages) for c in llm.calls[1:]]
    assert "'shout' is not loaded" in feedback[0]
    assert '"name": "shout"' in feedback[1] and '"loaded": false' in feedback[1]
    assert '"loaded": ["shout"]' in feedback[2]
    assert '"value": "HI"' in feedback[3]
    assert '"shout"' not in schema_before and '"const": "shout"' in schema_after
    assert llm.calls[4].response_schema is not None
    assert '"const": "shout"' in json.dumps(llm.calls[4].response_schema)
    assert r.reply == "HI"


def test_builtin_tools_now_and_calculate(home: MemoryHome) -> None:
    llm = ScriptedLLM(
        [
            step(actions=[{"action": "load_tools", "names": ["calculate", "now"]}]),
            step(actions=[{"action": "calculate", "expression": "6 * 7 + 3"}, {"action": "now"}]),
            step(reply="45"),
        ]
    )
    with agent(home, llm) as a:
        a.turn("6*7+3?")
    assert '"value": 45' in last_user(llm.calls[2].messages)


def test_python_mode_remember_recall_and_state(home: MemoryHome) -> None:
    llm = ScriptedLLM(
        [
            step(python='append_file("user.md", "- Allergic to peanuts\\n")\ncount = 1'),
            step(python="count += 1\nfinal_answer(f'Noted ({count}).')"),
            step(python="hits = recall('peanuts')\nfinal_answer(hits[0]['content'])"),
        ]
    )
    with agent(home, llm, mode="python") as a:
        r = a.turn("Remember I am allergic to peanuts.")
        assert r.reply == "Noted (2)."
        a.flush()
        r2 = a.turn("What am I allergic to?")
    assert "- Allergic to peanuts" in user_md(home)
    assert "peanuts" in r2.reply
    assert llm.calls[0].response_schema is not None
    assert "python" in llm.calls[0].response_schema["properties"]


def test_python_mode_failed_code_is_rolled_back(home: MemoryHome) -> None:
    before = user_md(home)
    llm = ScriptedLLM(
        [
            step(python='append_file("user.md", "- half\\n")\nread_file("missing.md")'),
            step(reply="I could not do it."),
        ]
    )
    with agent(home, llm, mode="python") as a:
        r = a.turn("Do something.")
    feedback = last_user(llm.calls[1].messages)
    assert "does not exist" in feedback and '"rolled_back": ["user.md"]' in feedback
    assert user_md(home) == before
    assert r.reply == "I could not do it."


def test_python_mode_tool_loading_reaches_the_sandbox(home: MemoryHome) -> None:
    llm = ScriptedLLM(
        [
            step(python="calculate('1+1')"),
            step(python="load_tools(['calculate'])\nfinal_answer(calculate('2**10'))"),
        ]
    )
    with agent(home, llm, mode="python") as a:
        r = a.turn("2^10?")
    assert "not loaded" in last_user(llm.calls[1].messages)
    assert r.reply == "1024"


def test_conversation_persists_and_resumes(home: MemoryHome) -> None:
    with agent(home, ScriptedLLM([step(reply="Hi Sam.")])) as a:
        a.turn("I'm Sam.")
        conv_id = a.conversation_id
    llm = ScriptedLLM([step(reply="You are Sam.")])
    with agent(home, llm, conversation=conv_id) as a:
        r = a.turn("Who am I?")
    history = [m.content for m in llm.calls[0].messages]
    assert any("I'm Sam." in c for c in history)
    assert '{"reply": "Hi Sam."}' in history
    conv = Conversations(home).load(conv_id)
    assert [m.content for m in conv.messages] == ["I'm Sam.", "Hi Sam.", "Who am I?", r.reply]
    assert Conversations(home).latest() is not None


def test_retrieval_off_puts_no_memory_in_context(home: MemoryHome) -> None:
    with agent(home, ScriptedLLM([step(reply="ok")])) as a:
        a.turn("My dog is Rex.")
    llm = ScriptedLLM([step(reply="?")])
    with agent(home, llm, retrieval=False) as a:
        r = a.turn("What is my dog called?")
    assert "Rex" not in last_user(llm.calls[0].messages)
    assert r.memory_tokens == 0


def test_streaming_shows_the_reply_once(home: MemoryHome) -> None:
    llm = ScriptedLLM([step(think="x", reply='Hello "friend", été is summer.')])
    pieces: list[str] = []
    with agent(home, llm) as a:
        r = a.turn("Hi", on_text=pieces.append)
    assert "".join(pieces) == r.reply == 'Hello "friend", été is summer.'
    assert len(pieces) > 1


def test_the_chunk_is_written_before_the_reply_the_files_after_it(home: MemoryHome) -> None:
    """Read your writes: the exchange's chunk is durable when the reply is
    returned; the conversation file and the trace follow in the background."""
    import threading

    gate = threading.Event()
    with agent(home, ScriptedLLM([step(reply="ok")])) as a:
        original = a.conversations.save

        def slow(*args: Any, **kw: Any) -> None:
            gate.wait(5)
            original(*args, **kw)

        a.conversations.save = slow  # type: ignore[method-assign]
        r = a.turn("My bike is red.")
        assert r.reply == "ok"
        assert len(list(home.layout.chunks.rglob("chunk-*.json"))) == 1
        assert not list((home.layout.state / "conversations").glob("c-*.json"))  # not yet
        gate.set()
        a.flush()
        assert len(list((home.layout.state / "conversations").glob("c-*.json"))) == 1
    assert (home.layout.state / "traces").is_dir()


def test_profile_pipeline_runs_in_background(home: MemoryHome) -> None:
    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        facts = ((schema or {}).get("properties") or {}).get("facts")
        if facts is not None and facts.get("type") == "string":  # the profile gate
            return json.dumps({"facts": "yes"})
        if facts is not None:
            return json.dumps({"facts": [{"kind": "food_like", "value": "ramen", "name": ""}]})
        return step(reply="Yum.")

    with Agent(home, ScriptedLLM(fn=fn), embeddings=False, learn_profile=True) as a:
        a.turn("I love ramen.")
        a.flush()
        assert not a.background_errors
    food = (home.layout.profile / "resource_user_food_prefs.json").read_text(encoding="utf-8")
    trace = json.loads(sorted((home.layout.state / "traces").glob("*.json"))[-1].read_text())
    assert any(n.startswith("profile:") for n in trace["background"]), trace["background"]
    assert "Likes ramen" in food, trace["background"]


@pytest.mark.parametrize("message", ["", "   ", "x" * 20_001, "nul\x00byte", None, 42, ["list"]])
def test_bad_messages_are_refused_and_nothing_is_written(home: MemoryHome, message: Any) -> None:
    llm = ScriptedLLM([step(reply="never")])
    ops_before = home.layout.ops_log.read_bytes()
    with agent(home, llm) as a, pytest.raises(InvalidInput):
        a.turn(message)
    assert not llm.calls
    assert home.layout.ops_log.read_bytes() == ops_before


def test_bad_agent_settings(home: MemoryHome) -> None:
    llm = ScriptedLLM([])
    for kw in ({"mode": "yaml"}, {"max_steps": 0}, {"planning_interval": 0}):
        with pytest.raises(InvalidInput):
            agent(home, llm, **kw)


def test_context_leaves_out_weak_hits(home: MemoryHome) -> None:
    facts = ["My dog is called Rex.", "I drive a blue Volvo car.", "I like jazz music."]
    with agent(home, ScriptedLLM(fn=lambda m, s: step(reply="Noted."))) as a:
        for fact in facts:
            a.turn(fact)
        a.flush()
        loose = a.memory.context("What car do I drive?", budget_tokens=1000, k=5, min_ratio=0.0)
        strict = a.memory.context("What car do I drive?", budget_tokens=1000, k=5, min_ratio=0.99)
        tiny = a.memory.context("What car do I drive?", budget_tokens=5, k=5)
    (line,) = strict.text.splitlines()
    assert re.fullmatch(DATED + r"You said: I drive a blue Volvo car\.", line)
    assert len(loose.sources) >= len(strict.sources)
    assert tiny.text == "" and tiny.tokens == 0


def test_small_prompt_set_for_the_embedded_model(home: MemoryHome) -> None:
    from memagent.agent.memory import looks_like_request

    assert looks_like_request("what is my dog called") and looks_like_request("Tell me x")
    assert looks_like_request("Ok?") and not looks_like_request("My dog is Rex.")
    llm = ScriptedLLM(fn=lambda m, s: step(reply="Got it."))
    with agent(home, llm, prompt_set="small") as a:
        a.turn("My dog is called Rex.")
        a.flush()
        a.turn("I live in Oslo.")
        a.flush()
        a.turn("What is my dog called?")
    statement, question = llm.calls[1], llm.calls[2]
    assert statement.response_schema is not None
    assert set(statement.response_schema["properties"]) == {"reply"}
    assert "Rex" not in last_user(statement.messages)  # no recall for a statement
    assert "You said: My dog is called Rex." in last_user(question.messages)
    assert "Oslo" not in last_user(question.messages)  # weak hit left out
    # no chat history in the small set: the last messages are the examples, then this turn
    assert not any("I live in Oslo." in m.content for m in question.messages[:-1])


def test_an_honest_fallback_is_not_stored_as_memory(home: MemoryHome) -> None:
    with agent(home, ScriptedLLM(["garbage"]), max_steps=1) as a:
        r = a.turn("My locker is number 12.")
    assert not r.ok
    (chunk,) = list(home.layout.chunks.rglob("chunk-*.json"))
    doc = json.loads(chunk.read_text())
    assert doc["content"] == "My locker is number 12."
    assert "couldn't" not in json.dumps(doc)


def test_the_model_sees_tool_signatures_and_the_action_schema(home: MemoryHome) -> None:
    llm = ScriptedLLM([step(reply="ok")])
    with agent(home, llm) as a:
        a.turn("hi")
    system = llm.calls[0].messages[0].content
    assert "recall(query: str, k: int = 5)" in system and "load_tools(names: list[str])" in system
    assert "JSON Schema of your response" in system and '"update_file"' in system


def test_next_turn_sees_the_last_exchange_before_the_file_is_written(home: MemoryHome) -> None:
    import threading

    gate = threading.Event()
    llm = ScriptedLLM([step(reply="Hi Sam."), step(reply="You are Sam.")])
    with agent(home, llm) as a:
        original = a.conversations.save

        def slow_save(conv: Any) -> None:
            gate.wait(5)
            original(conv)

        a.conversations.save = slow_save  # type: ignore[method-assign]
        a.turn("I'm Sam.")
        a.turn("Who am I?")
        assert any("I'm Sam." in m.content for m in llm.calls[1].messages[:-1])
        gate.set()
    from memagent.agent import Traces

    turns = sorted(json.loads(p.read_text())["turn"] for p in Traces(home).paths())
    assert turns == [1, 2]
    saved = Conversations(home).latest()
    assert saved is not None and len(saved.messages) == 4


def test_agent_opens_a_home_by_path_and_a_model_by_spec(tmp_path: Path) -> None:
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps([step(reply="Noted."), step(reply="Pixel.")]))
    where = tmp_path / "new" / "mem"
    with Agent(str(where), model=f"scripted:{replies}", learn_profile=False) as a:
        assert a.run("My cat is named Pixel.") == "Noted."
        assert a.run("What is my cat called?") == "Pixel."
    assert (where / "vault" / "user.md").is_file()  # created and initialised
    with Agent(where, ScriptedLLM([step(reply="ok")]), learn_profile=False) as again:
        assert again.home.root == where  # a second open reuses it
        assert again.run("hi") == "ok"


def test_agent_run_raises_when_the_model_fails(home: MemoryHome) -> None:
    from memagent.llm import LLMError

    with Agent(home, ScriptedLLM([]), learn_profile=False) as a, pytest.raises(LLMError):
        a.run("What is my cat called?")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"home": 42}, "home must be a folder path"),
        ({"model": "nonsense"}, "unknown model spec"),
        ({"llm": "scripted:x.json", "model": "embedded"}, "give the model once"),
    ],
)
def test_agent_bad_home_or_model(
    kwargs: dict[str, Any], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    kwargs.setdefault("home", tmp_path / "h")
    with pytest.raises(InvalidInput, match=message):
        Agent(**kwargs)


def test_agent_refuses_a_file_as_home(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(InvalidInput, match="not a folder"):
        Agent(f, ScriptedLLM([]))
    assert f.read_text() == "x"


def test_record_false_answers_without_writing(home: MemoryHome) -> None:
    before = home.layout.ops_log.read_bytes()
    with Agent(home, ScriptedLLM([step(reply="Hi.")]), record=False) as a:
        assert a.run("I like tea.") == "Hi."
    assert home.layout.ops_log.read_bytes() == before
