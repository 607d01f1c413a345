"""One embedded-model process for every grammar llama.cpp must build without warnings.

Each constrained request the profile makes (the extraction, the revision and
fact-check questions) is sent once, in one fresh process, with llama.cpp's log
captured: loading the 1.1 GB model once instead of once per test saves about a
minute of the suite. A marker line goes to stdout and stderr before each request,
so each test reads its own reply and log. The old operations schema, whose regex
patterns llama.cpp cannot build, goes last: it is the control that the captured
log does show llama.cpp's warnings. Under `scripts/test`'s xdist workers the first
worker to need it runs the process and leaves what it printed in a file of this test
run (behind a file lock, in pytest's run folder) for the others, so the model still
loads once.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

REQUESTS = ("extraction", "revise", "rewrite", "factcheck", "operations")
WARNINGS = ("incomplete", "not supported", "unsupported")

_RUN = textwrap.dedent(
    """
    import sys
    from memagent.llm.embedded import EmbeddedLLM
    from memagent.memory.profile.extract import extract_messages
    from memagent.memory.profile.fact_schema import extraction_schema
    from memagent.memory.profile.factcheck import HOLDS_SCHEMA, holds_p
    from memagent.memory.profile.factcheck import question as holds_question
    from memagent.memory.profile.models import Item
    from memagent.memory.profile.operations import OperationBatch
    from memagent.memory.profile.revise import REWRITE_SCHEMA, STILL_SCHEMA, ended_p
    from memagent.memory.profile.revise import rewrite_question
    from memagent.memory.profile.revise import question as still_question

    def mark(name):
        for stream in (sys.stdout, sys.stderr):
            print("=== " + name, file=stream, flush=True)

    llm = EmbeddedLLM()
    mark("extraction")
    said = "I'm allergic to shellfish."
    reply = llm.chat(extract_messages(said), response_schema=extraction_schema(), max_tokens=60)
    print("REPLY", reply.text)
    mark("revise")
    item = Item(item="omeprazole", display="Takes omeprazole", added="2026-03-04")
    said = "Finished my course of omeprazole, don't need it anymore."
    reply = llm.chat(still_question(said, item), response_schema=STILL_SCHEMA, max_tokens=32)
    print("REPLY", reply.text)
    print("P", ended_p(llm, said, item))
    mark("rewrite")
    item = Item(item="sertraline_50mg", display="Takes sertraline 50mg", added="2026-03-04")
    said = "GP upped my sertraline to 100mg today."
    reply = llm.chat(rewrite_question(said, item), response_schema=REWRITE_SCHEMA, max_tokens=48)
    print("REPLY", reply.text)
    mark("factcheck")
    said = "Had sushi with the team tonight, so good."
    reply = llm.chat(holds_question(said, "Likes sushi"), response_schema=HOLDS_SCHEMA,
                     max_tokens=32)
    print("REPLY", reply.text)
    print("P", holds_p(llm, said, "Likes sushi"))
    mark("operations")
    try:
        reply = llm.chat(extract_messages("I'm allergic to shellfish."),
                         response_schema=OperationBatch.model_json_schema(), max_tokens=60)
        print("REPLY", reply.text)
    except Exception as e:  # the control may fail: only its log matters
        print("ERROR", e)
    mark("end")
    """
)


@dataclass(frozen=True)
class Request:
    reply: str
    """The model's reply text (the line after "REPLY")."""
    p: float | None
    """The probability the request printed, for the yes/no questions."""
    log: str
    """llama.cpp's log from the start of the process through this request."""


@functools.cache
def _run() -> tuple[str, str, int]:
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run_id is None:
        return _spawn()
    run_dir = os.environ.get("MEMAGENT_TEST_RUN_DIR") or tempfile.gettempdir()
    shared = Path(run_dir) / f"memagent-llama-support-{run_id}.json"
    with FileLock(f"{shared}.lock"):
        if not shared.exists():
            shared.write_text(json.dumps(_spawn()), encoding="utf-8")
        out, err, rc = json.loads(shared.read_text(encoding="utf-8"))
    return str(out), str(err), int(rc)


def _spawn() -> tuple[str, str, int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", _RUN],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        check=False,
    )
    return done.stdout, done.stderr, done.returncode


def llama_request(name: str) -> Request:
    """What the shared process printed for request `name` (one of `REQUESTS`)."""
    out, err, rc = _run()
    assert rc == 0, err[-2000:]
    assert f"=== {name}\n" in out, out[-2000:]
    part = out.split(f"=== {name}\n", 1)[1].split("\n=== ", 1)[0]
    reply = part.split("REPLY ", 1)[1].split("\n", 1)[0] if "REPLY " in part else ""
    p = float(part.split("P ", 1)[1].split()[0]) if "\nP " in f"\n{part}" else None
    after = REQUESTS[REQUESTS.index(name) + 1] if name != REQUESTS[-1] else "end"
    log = err.split(f"=== {after}\n", 1)[0]
    return Request(reply=reply, p=p, log=log)


def assert_no_warning(log: str) -> None:
    for warning in WARNINGS:
        assert warning not in log.lower(), log[-2000:]
