"""Medicines and named conditions said in fixed ways, read without the model.

A 1.5B model given "i take levothyroxine every morning before breakfast, how long do i
need to wait before my coffee?" or "i have ADHD so …" often lists nothing: the line reads
as a question or a request. The words settle it: "I take" or "I'm on" before a word with
a medicine's ending (levothyroxine, ramipril, atorvastatin, metformin), and "I have" or
"diagnosed with" before the name of a lasting condition.
"""

from __future__ import annotations

import re

_MEDICINE = (
    r"[a-z]+(?:xine|etine|aline|pram|pril|sartan|statin|olol|dipine|azole|cillin|cycline|formin|"
    r"profen|amol|zepam|oxacin|dronate|lukast|prazole|triptan|gliptin|semide|thiazide|parin|"
    r"farin|azepine|tidine|lamide|pramine|isone|olone)|insulin"
)
_TAKES = re.compile(
    rf"\b(?:I|I'm|I am|im)\s+(?:still\s+|now\s+|also\s+)?(?:take|taking|on)\s+"
    rf"(?:\d+\s?(?:mg|mcg|micrograms?)\s+(?:of\s+)?)?({_MEDICINE})\b",
    re.IGNORECASE,
)
_CONDITIONS = (
    r"adhd|add|asthma|autism|epilepsy|ibs|crohn'?s(?: disease)?|coeliac disease|celiac disease|"
    r"migraines|arthritis|eczema|psoriasis|endometriosis|pcos|copd|dyslexia|dyspraxia|"
    r"type (?:1|2|one|two) diabetes|diabetes|hypothyroidism|hyperthyroidism|fibromyalgia|"
    r"lupus|gout|sleep apnoea|sleep apnea|tinnitus|ocd|ptsd|bipolar(?: disorder)?|"
    r"high blood pressure|hypertension|high cholesterol|multiple sclerosis|ms|me/cfs|"
    r"long covid|anaemia|anemia|a heart condition|a bad back|a bad knee|a dodgy knee"
)
_HAS = re.compile(
    rf"\b(?:I|we)\s+(?:have|'ve got|have got|live with|was diagnosed with|got diagnosed with|"
    rf"'ve been diagnosed with|have been diagnosed with)\s+({_CONDITIONS})\b|"
    rf"^\W*(?:diagnosed with|living with)\s+({_CONDITIONS})\b",
    re.IGNORECASE,
)


def medicines_said(sentence: str) -> list[str]:
    """Each medicine `sentence` says its writer takes ("I take levothyroxine", "I'm on
    20mg of citalopram")."""
    return [m.group(1) for m in _TAKES.finditer(sentence)]


def conditions_said(sentence: str) -> list[str]:
    """Each lasting condition `sentence` says its writer has ("i have ADHD", "diagnosed
    with coeliac disease")."""
    return [next(g for g in m.groups() if g) for m in _HAS.finditer(sentence)]
