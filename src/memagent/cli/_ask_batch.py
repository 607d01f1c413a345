"""`memagent ask --batch Q.jsonl`: many questions, one loaded model.

Input: one JSON object a line, `{"id": …, "question": "…", "asked_at": "…"}`
(`id` optional: the line number; `asked_at` optional: when the question is
asked, YYYY-MM-DD or ISO 8601, else `--as-of`, else now). Every line is
checked before the model loads; a bad one is a one-line error naming the line,
and nothing runs. Output: one JSON line per question (`--json`) with the
answer, whether the model gave it (`ok`), the memory ids put in context,
latency and tokens, `asked_at` as used (null: now) and `refused_by`; or the
answers alone, one a line.
Batch questions are read-only: nothing is stored (no exchange, conversation,
trace or profile learning).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memagent.core import InvalidInput, MemagentError

if TYPE_CHECKING:
    from memagent.agent import Agent

MAX_BATCH_BYTES = 64 * 1024 * 1024
MAX_BATCH_QUESTIONS = 100_000


@dataclass(frozen=True)
class BatchQuestion:
    id: Any
    question: str
    asked_at: datetime | None = None


def read_batch(path: Path) -> list[BatchQuestion]:
    """The questions in `path`; `InvalidInput` naming the first bad line."""
    from memagent.agent.turn import check_message
    from memagent.index.temporal import parse_as_of

    try:
        size = path.stat().st_size
        if size > MAX_BATCH_BYTES:
            raise InvalidInput(f"{path}: {size} bytes; a batch is at most {MAX_BATCH_BYTES}")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    out: list[BatchQuestion] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name}, line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("question"), str):
            raise InvalidInput(f'{where}: expected {{"id": …, "question": "…"}}')
        qid = obj.get("id", n)
        if not (qid is None or isinstance(qid, str | int | float | bool)):
            raise InvalidInput(f"{where}: id must be a string or a number")
        try:
            question = check_message(obj["question"])
        except InvalidInput as exc:
            raise InvalidInput(f"{where}: {exc}") from exc
        asked = obj.get("asked_at")
        try:
            when = None if asked is None else parse_as_of(asked)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}: asked_at: {exc}") from exc
        out.append(BatchQuestion(qid, question, when))
        if len(out) > MAX_BATCH_QUESTIONS:
            raise InvalidInput(f"{path}: more than {MAX_BATCH_QUESTIONS} questions")
    if not out:
        raise InvalidInput(f"{path}: no questions")
    return out


def answer_batch(
    agent: Agent,
    questions: list[BatchQuestion],
    *,
    as_json: bool,
    as_of: datetime | None = None,
) -> int:
    """Answer each question in order, printing as it goes; how many failed. A
    line's `asked_at` wins over `as_of` (the `--as-of` of the whole batch)."""
    failed = 0
    for q in questions:
        started = time.perf_counter()
        asked = q.asked_at or as_of
        try:
            turn = agent.turn(q.question, as_of=asked)
            ok, answer, error = turn.ok, turn.reply, turn.error
            usage, sources, grounded = turn.usage, turn.memory_sources, turn.p_grounded
            refused_by: str | None = turn.refused_by
        except MemagentError as exc:
            ok, answer, error, usage, sources, grounded = False, "", str(exc), None, [], None
            refused_by = None
        if not ok:
            failed += 1
        if as_json:
            line = {
                "id": q.id,
                "question": q.question,
                "answer": answer if ok else "",
                "ok": ok,
                "memory_ids": [s.id for s in sources if s.id],
                "latency_s": round(time.perf_counter() - started, 3),
                "prompt_tokens": usage.prompt_tokens if usage else 0,
                "completion_tokens": usage.completion_tokens if usage else 0,
                "error": None if ok else error,
                "p_grounded": grounded,
                "asked_at": asked.isoformat() if asked is not None else None,
                "refused_by": refused_by,
            }
            sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
        else:
            sys.stdout.write((answer.replace("\n", " ") if ok else "") + "\n")
            if not ok:
                sys.stderr.write(f"error: question {q.id}: {error}\n")
        sys.stdout.flush()
    return failed
