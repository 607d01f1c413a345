"""LoCoMo's answer scoring (task_eval/evaluation.py of snap-research/locomo).

Answers and gold are normalised (lower case, punctuation, articles and "and"
removed), tokens Porter-stemmed, token F1. Category 1 (multi-hop) splits both on
commas and averages the best match per gold part; category 3 keeps the gold
before any ';'; category 5 (adversarial) scores 1 when the answer refuses (says it
is not mentioned / not in memory / not available).
"""

from __future__ import annotations

import re
import statistics
import string
from collections import Counter
from collections.abc import Callable

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
REFUSALS = (
    "not mentioned",
    "no information",
    "don't have that",
    "do not have that",
    "not in memory",
    "not available",
    "don't know",
    "not specified",
)


def _stemmer() -> Callable[[str], str]:
    import snowballstemmer

    porter = snowballstemmer.stemmer("porter")
    return lambda w: str(porter.stemWord(w))


stem = _stemmer()
_PUNCT = set(string.punctuation)


def normalize_answer(s: str) -> str:
    s = s.replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = re.sub(r"\b(a|an|the|and)\b", " ", s)
    return " ".join(s.split())


def f1_score(prediction: str, gold: str) -> float:
    pred = [stem(w) for w in normalize_answer(prediction).split()]
    truth = [stem(w) for w in normalize_answer(gold).split()]
    same = sum((Counter(pred) & Counter(truth)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction: str, gold: str) -> float:
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return statistics.fmean(max(f1_score(p, g) for p in preds) for g in golds)


def refuses(answer: str) -> bool:
    low = answer.lower().replace("\u2019", "'")
    return any(r in low for r in REFUSALS)


def score(category: int, answer: str, gold: str) -> float:
    if category == 5:
        return 1.0 if refuses(answer) else 0.0
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category == 1:
        return f1_multi(answer, gold)
    return f1_score(answer, gold)
