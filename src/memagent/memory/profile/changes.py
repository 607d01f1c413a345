"""Changes a statement makes to what the profile already holds, read by rule.

Mechanical, no model. Each rule changes existing items from the statement's own
words, so it works when the model reads nothing (a small model has nothing to copy
in "Maya and I broke up", and a capable one reads the old fact, not its end):

- **A pet or person gone** (`relation_over`): "Sam is no longer my girlfriend",
  "Maya and I broke up", "we divorced", "we had to put our dog Biscuit down": the
  item that names them (by name, or by the relation when there is one of it) is
  removed.
- **A name corrected** (`renames`): "we renamed him Comet", "I meant Iggy not
  Ziggy", "the dog's name is Rocco not Rocky", "autocorrect!! it's Oliver" (a held
  Olive): the pet or person named the old way is named the new way.
- **The own name respelt** (`own_name_respelled`): "argh autocorrect. PRIYA." with
  "Pria" held.
- **Answers of the other pole** (`answer_swaps`): a wish for more detail ends one
  for short answers, casual ends formal, and the other way round (one side of each
  axis at a time).
- **A job over** (`job_over`): "got laid off", "quit the coffee shop", unless said of
  someone else ("mark got made redundant").
- **Sober** (`sober`): "I've quit drinking" ends the likes of alcoholic drinks.
- **Back to normal answers** (`back_to_normal`): "you can go back to normal answers"
  ends every way of answering held; "back to english please" ends one in another
  language.

Stays, moved or ended, are `stays`'; habits and plans moved to another day or time are
`reschedules`'; life events that end a state held without its words ("baby arrived",
"eating meat again") are `milestones`'.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memagent.memory.profile import relations
from memagent.memory.profile.item_keys import match_key, tokens
from memagent.memory.profile.languages import SPOKEN
from memagent.memory.profile.models import Item, Resource
from memagent.memory.profile.negation import parts, subclause
from memagent.memory.profile.operations import AnyOp, AppendOp, RemoveOp, UpdateOp
from memagent.memory.profile.subjects import led_by_a_name, their_subject

FOOD, GENERAL = "resource_user_food_prefs.json", "resource_user_general_prefs.json"
HEALTH, ROUTINE = "resource_user_health.json", "resource_user_routine.json"
PEOPLE, STAY, HOME = "personal.facts", "whereabouts.current", "home"

_RELATIVE_WORDS = "|".join(sorted({*relations.RELATIVES, *relations.ANIMALS}, key=len))
RELATION_OVER = re.compile(
    r"\b(?:no longer|not|isn'?t|is not|aren'?t) (?:my|our) (?:[\w-]+ )?"
    rf"(?:{_RELATIVE_WORDS})\b(?!'s)|"
    rf"\bex-?(?:{_RELATIVE_WORDS})\b|"
    r"\b(?:broke|break|breaking|split|splitting) up\b|\bsplit\b|\bdivorc\w*|\bseparated\b|"
    r"\b(?:and I|& I|we) are (?:done|over|finished|through)\b|\bwe'?re (?:done|over|through)\b|"
    r"\bpassed away\b|\bdied\b|\bput (?:\w+ ){0,4}?down\b|\bput to sleep\b|\brehomed\b|"
    r"\b(?:we|I)(?:'ve| have)? (?:just |sadly |finally )?lost (?:our |my )?"
    rf"(?:old |little |lovely )?(?:[A-Z][a-z]+\b|(?:{_RELATIVE_WORDS})\b)|"
    r"\bran away\b|\b(?:went|gone|has gone|moved) to live with\b|\bRIP\b|\brest in peace\b|"
    r"\bcrossed the rainbow bridge\b|\bwent back to the (?:rescue|shelter|breeder)\b|"
    r"\bdon'?t (?:actually |even )?have an? (?:[\w-]+ )?"
    rf"(?:{'|'.join(relations.ANIMALS)}|{_RELATIVE_WORDS})\b",
    re.IGNORECASE,
)
"""Words that say a pet or a person is no longer the user's."""
_NAME = r"([A-Z][a-zA-Z'-]+)"
_RENAME = re.compile(
    rf"\brenam\w*\s+(?:him|her|it|them|(?:the|our|my)\s+\w+)\s+(?:to\s+|as\s+)?{_NAME}"
)
_NOW_CALLED = re.compile(rf"\b{_NAME} is now (?:officially |called |named )?{_NAME}\b")
""""Pickle is now officially Luna": the pet named Pickle is named Luna."""
_REAL_NAME = re.compile(
    rf"\b(?:[Hh]er|[Hh]is|[Ii]ts|[Tt]heir) (?:real|actual|proper|official|registered) name "
    rf"(?:is|was) (?:actually )?{_NAME}"
)
""""turns out her real name is Dolly": the pet the statement is about is named anew."""
_RENAMED = re.compile(r"\brenam\w*\s+(?:him|her|it|them|(?:the|our|my)\s+\w+)\b")
_NEW_NAME = re.compile(
    rf"\b(?:[Hh]e|[Ss]he|[Ii]t|[Tt]hey)(?:'s| is| are)(?: now| called)? {_NAME}(?: now)?\b|"
    rf"\b(?:[Nn]ow|[Cc]alled|[Nn]amed) {_NAME}\b"
)
""""We renamed the cat, Smudge just didn't suit him. he's Pudding now": the new name in
another sentence of the same statement."""
_MEANT = re.compile(
    r"\b(?:[Ii] meant|[Ii]t'?s|[Ii]t is|[Ss]orry,?|[Oo]ops,?|[Aa]ctually,?|[Nn]ame is|[Nn]ame's|"
    r"[Cc]alled|[Nn]amed)\s+"
    rf"{_NAME},?\s+not\s+{_NAME}\b"
    rf"|\bnot\s+{_NAME},?\s+(?:but|it'?s|it is)\s+{_NAME}\b"
)
_TYPO = re.compile(
    r"\b(?:autocorrect\w*|auto-correct\w*|typo|misspel\w*|spelt|spelled|spelling|I meant|"
    r"with an? [a-z]\b)",
    re.I,
)
_ITS_NAME = re.compile(rf"\b(?:[Ii]t'?s|[Ii]t is|[Ii]t should be|[Ii]t was meant to be) {_NAME}\b")
""""sorry autocorrect!! it's Oliver": a held name spelt nearly so (Olive) is the one meant."""
_SHORT = re.compile(r"\b(brief|short|shorter|concise|succinct|terse|to the point)\b", re.I)
_LONG = re.compile(
    r"\b(detail|details|detailed|longer|in-depth|in depth|thorough|elaborate)\b", re.I
)
_FORMAL = re.compile(r"\b(formal|professional|polite)\b", re.I)
_CASUAL = re.compile(r"\b(casual|informal|relaxed|chatty|friendly|laid[- ]back)\b", re.I)
_AXES = (
    ("length", ("short", _SHORT), ("long", _LONG)),
    ("register", ("formal", _FORMAL), ("casual", _CASUAL)),
)
_SOBER = re.compile(
    r"\b(?:quit|stopped|given up|gave up|giving up|off|cut out|no more|done with) "
    r"(?:the )?(?:drinking|drink|booze|alcohol)\b"
    r"(?=\s*(?:$|[,.;!]|altogether|completely|entirely|for good|alcohol|booze|now|\d|and|"
    r"since|so))|\bsober\b|\bteetotal\b|\bdon'?t drink (?:alcohol )?any ?more\b",
    re.IGNORECASE,
)
ALCOHOL = re.compile(
    r"\b(beers?|wines?|whisk(?:e)?y|bourbon|scotch|gin|vodka|rum|tequila|mezcal|sake|soju|"
    r"cider|ales?|ipas?|lagers?|stouts?|porters?|cocktails?|champagne|prosecco|cava|"
    r"margaritas?|martinis?|negronis?|spritz|mojitos?|sangria|brandy|cognac|port|sherry|"
    r"alcohol|booze|drinking)\b",
    re.IGNORECASE,
)


def items(resources: Mapping[str, Resource], file: str, path: str) -> list[Item]:
    res = resources.get(file)
    return (res.items_at(path) if res is not None else None) or []


def remove(file: str, path: str, key: str) -> RemoveOp:
    return RemoveOp(operation="remove", file=file, path=path, value={"item": key})


def written_at(ops: Sequence[AnyOp], path: str) -> set[str]:
    return {
        match_key(o.value.item)
        for o in ops
        if isinstance(o, AppendOp | UpdateOp | RemoveOp) and o.path == path
    }


def who(item: Item) -> tuple[str, str, str] | None:
    """(kind, relation, name) of a pet's or relative's item ("Dog named Biscuit",
    "Girlfriend: Sam"), else None."""
    kind = item.item.split("_", 1)[0]
    if kind not in ("pet", "family"):
        return None
    display = item.display or ""
    if kind == "pet" and " named " in display:
        relation, _, name = display.partition(" named ")
    elif ": " in display:
        relation, _, name = display.partition(": ")
    else:
        return None
    return kind, relation.strip().lower(), name.strip()


def held_names(resources: Mapping[str, Resource]) -> set[str]:
    """The match keys of the held pets' and relatives' names ("Mochi" of "Cat named Mochi")."""
    return {match_key(w[2]) for i in items(resources, GENERAL, PEOPLE) if (w := who(i)) and w[2]}


def relation_over(name: str, relation: str, clause: str) -> bool:
    """`clause` says the pet or person (`name`, or the `relation` when no name is
    said) is no longer the user's (module doc), in the part of it that names them."""
    said = name if name and re.search(rf"\b{re.escape(name)}\b", clause) else relation
    if not said:
        return False
    part = subclause(said, clause)
    if len(part.split()) < 3:  # "Maya | and I broke up": the name alone, its verb after
        part = clause
    return bool(RELATION_OVER.search(part))


def relation_endings(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """Remove each pet or relative a sentence says is gone (module doc): named, or
    the only one of the relation the sentence names ("we had to put our dog down")."""
    people = [(i, w) for i in items(resources, GENERAL, PEOPLE) if (w := who(i)) is not None]
    written = written_at(ops, PEOPLE)
    out: list[AnyOp] = []
    for s in sentences:
        if not RELATION_OVER.search(s):
            continue
        for item, (_kind, relation, name) in people:
            if match_key(item.item) in written:
                continue
            by_name = bool(name) and re.search(rf"\b{re.escape(name)}\b", s) is not None
            alone = sum(1 for _, w in people if w[1] == relation) == 1
            by_relation = alone and re.search(
                rf"\b(?:my|our|an?|the)\s+(?:[\w-]+\s+)?{re.escape(relation)}\b", s, re.I
            )
            if (by_name or by_relation) and relation_over(name if by_name else "", relation, s):
                out.append(remove(GENERAL, PEOPLE, item.item))
                written.add(match_key(item.item))
    return out


def renames(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """Name a pet or relative anew (module doc): "renamed him Comet" (the pet the
    sentence names, or the only one), "I meant Iggy not Ziggy" (the one named Ziggy)."""
    people = [(i, w) for i in items(resources, GENERAL, PEOPLE) if (w := who(i)) is not None]
    if not people:
        return []
    written = written_at(ops, PEOPLE)
    out: list[AnyOp] = []
    for s in sentences:
        pairs: list[tuple[str, str | None]] = []
        for m in _MEANT.finditer(s):
            new, old = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
            pairs.append((new, old))
        pairs += [(m.group(1), None) for m in (*_RENAME.finditer(s), *_REAL_NAME.finditer(s))]
        pairs += [(m.group(2), m.group(1)) for m in _NOW_CALLED.finditer(s)]
        if not pairs and _TYPO.search(" ".join(sentences)):
            for m in _ITS_NAME.finditer(s):
                near = {
                    w[2] for _, w in people if w[2] and w[2][:3].lower() == m.group(1)[:3].lower()
                }
                if len(near) == 1 and m.group(1) not in near:
                    pairs.append((m.group(1), near.pop()))
        if not pairs and _RENAMED.search(s):
            said = " ".join(sentences)
            pairs += [(m.group(1) or m.group(2), None) for m in _NEW_NAME.finditer(said)][:1]
        for new, old in pairs:
            named = [
                (i, w)
                for i, w in people
                if (old and w[2].lower() == old.lower())
                or (not old and w[2] != new and re.search(rf"\b{re.escape(w[2])}\b", s))
            ]
            if not named and not old:
                named = [(i, w) for i, w in people if w[0] == "pet"]
            if len(named) != 1 or any(w[2].lower() == new.lower() for _, w in people):
                continue
            item, (kind, relation, name) = named[0]
            key = relations.key(kind, relation, new)
            if match_key(key) in written or match_key(item.item) in written:
                continue
            value = {"item": key, "display": (item.display or "").replace(name, new)}
            if match_key(key) == match_key(item.item):
                out.append(UpdateOp(operation="update", file=GENERAL, path=PEOPLE, value=value))
            else:
                out.append(remove(GENERAL, PEOPLE, item.item))
                out.append(AppendOp(operation="append", file=GENERAL, path=PEOPLE, value=value))
            written |= {match_key(key), match_key(item.item)}
    return out


_WED = re.compile(
    r"\b(?:got|just got|we got|getting|we're|we are|are now|finally)\s+married\b|"
    r"\btied the knot\b|\bmy (?:wife|husband|spouse) now\b",
    re.IGNORECASE,
)
_ENGAGED = re.compile(
    r"\b(?:got|just got|we got|we're|we are|are now|finally)\s+engaged\b|\bproposed\b|"
    r"\bsaid yes\b|\bmy fianc[ée]e? now\b",
    re.IGNORECASE,
)
_PARTNER_NOW = (
    (_WED, {"girlfriend": "wife", "boyfriend": "husband", "fiancee": "wife", "fiancée": "wife",
            "fiance": "husband", "fiancé": "husband", "partner": "spouse"}),
    (_ENGAGED, {"girlfriend": "fiancée", "boyfriend": "fiancé", "partner": "fiancé(e)"}),
)  # fmt: skip


def partner_steps(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """A partner's new relation when a sentence says the two married or got engaged
    ("Lena and I got married on saturday!! she's my wife now" with a girlfriend Lena
    held): the one the sentence names, or the only partner held."""
    ours = [s for s in sentences if re.search(r"\b(?:I|we|us|our)\b", s, re.IGNORECASE)]
    said = " ".join(ours)  # "Maya got married, what a party": not the writer's
    step = next(((cue, up) for cue, up in _PARTNER_NOW if cue.search(said)), None)
    if step is None:
        return []
    people = [(i, w) for i in items(resources, GENERAL, PEOPLE) if (w := who(i)) is not None]
    partners = [(i, w) for i, w in people if w[0] == "family" and w[1] in step[1]]
    named = [(i, w) for i, w in partners if w[2] and re.search(rf"\b{re.escape(w[2])}\b", said)]
    chosen = named or (partners if len(partners) == 1 else [])
    if len(chosen) != 1 or match_key(chosen[0][0].item) in written_at(ops, PEOPLE):
        return []
    item, (_kind, relation, name) = chosen[0]
    now = step[1][relation]
    display = re.sub(re.escape(relation), now.capitalize(), item.display or "", flags=re.I)
    value = {"item": relations.key("family", now, name), "display": display}
    return [
        remove(GENERAL, PEOPLE, item.item),
        AppendOp(operation="append", file=GENERAL, path=PEOPLE, value=value),
    ]


def answer_swaps(
    ops: Sequence[AnyOp], resources: Mapping[str, Resource], paths: Sequence[str]
) -> list[AnyOp]:
    """Removals of the answers of the other pole when `ops` add a new way of answering
    on one pole of an axis: short or long, formal or casual (module doc)."""
    out: list[AnyOp] = []
    for path in paths:
        existing = items(resources, GENERAL, path)
        have = {match_key(i.item) for i in existing}
        for op in ops:
            if not isinstance(op, AppendOp | UpdateOp) or op.path != path:
                continue
            if match_key(op.value.item) in have:
                continue
            for axis, mine in _poles(op.value.item).items():
                out.extend(
                    remove(GENERAL, path, i.item)
                    for i in existing
                    if _poles(i.item).get(axis, mine) != mine
                )
    return out


def _poles(key: str) -> dict[str, str]:
    """The side an item asks for on each axis of answering it names, by the first word
    of a side it says ("more detail, the short answers were too short": long)."""
    said = key.replace("_", " ")
    out: dict[str, str] = {}
    for axis, (one, first), (other, second) in _AXES:
        a, b = first.search(said), second.search(said)
        if a and (not b or a.start() < b.start()):
            out[axis] = one
        elif b:
            out[axis] = other
    return out


_JOB_OVER = re.compile(
    r"\b(?:don'?t|do not|no longer) work (?:at|for|with) ([\w&' -]{2,40}?)"
    r"(?: any ?more| now|[,.;!]|$)|"
    r"\b(?:got |been |was )?(?:laid off|made redundant|fired|let go)\b|"
    r"\b(?:quit|left|lost) my job\b|\bhanded (?:in )?my notice\b|\bbetween jobs\b|"
    r"\b(?:I'?ve |I have |I )?(?:left|quit|packed in|jacked in|given up|gave up) (?:the |my )?"
    r"(?:[\w-]+ )?(?:work|job)\b(?! (?:on|for|at|with|today|tonight|early)\b)|"
    r"\b(?:quit|resigned from|walked out of) (?:the|my) (?:caf[eé]|coffee shop|shop|restaurant|"
    r"bar|pub|salon|bakery|office|firm|company|agency|warehouse|factory|store|practice|garage)\b|"
    r"\blast day (?:at|with) (?:the |my )?[\w&' -]{2,30}? was\b",
    re.IGNORECASE,
)


_MOVING = re.compile(r"\b(?:moving|move|relocating|relocation)\b", re.IGNORECASE)


def move_done(ops: Sequence[AnyOp], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """The removal of a held plan to move to the place the statement makes the new home
    ("Moving to Bristol on the 30th" once "all moved into the new flat in Bristol"): the
    plan happened."""
    homes = [
        {match_key(t) for t in tokens(str(o.value.display or "")) if t not in ("lives", "in")}
        for o in ops
        if isinstance(o, AppendOp | UpdateOp) and o.path == PEOPLE and o.value.item == HOME
    ]
    out: list[AnyOp] = []
    for item in items(resources, ROUTINE, "schedule.upcoming") if homes else []:
        line = item.display or item.item
        said = {match_key(t) for t in tokens(line)}
        if _MOVING.search(line) and any(home and home <= said for home in homes):
            out.append(remove(ROUTINE, "schedule.upcoming", item.item))
    return out


def ends_a_job(part: str) -> bool:
    """`part` says a job ended ("got let go from the warehouse today"): a job read in it is
    the one ending, not a job now."""
    return bool(_JOB_OVER.search(part))


def job_over(sentences: Sequence[str], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """The removal of the job when a sentence says it ended ("got laid off", "I don't work
    at Google any more": the one named, if it names one)."""
    job = next((i for i in items(resources, GENERAL, PEOPLE) if i.item == "work"), None)
    if job is None:
        return []
    held = {match_key(t) for t in tokens(job.display or "")}
    names = held_names(resources)
    for s in sentences:
        for m in _JOB_OVER.finditer(s):
            part = next((p for p in parts(s) if m.group(0) in p), s)
            if their_subject(part) or led_by_a_name(part, names):
                continue  # "mark got made redundant today": his job
            named = {match_key(t) for t in tokens(m.group(1) or "")}
            if not named or named <= held:
                return [remove(GENERAL, PEOPLE, job.item)]
    return []


def sober(sentences: Sequence[str], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """Removals of alcoholic drinks from the likes when the user says they stopped
    drinking ("I've quit drinking altogether", "6 months sober")."""
    if not any(_SOBER.search(s) for s in sentences):
        return []
    return [
        remove(FOOD, "drink.likes", i.item)
        for i in items(resources, FOOD, "drink.likes")
        if ALCOHOL.search(i.item.replace("_", " "))
    ]


def single_over(
    value: str, file: str, path: str, key: str, resources: Mapping[str, Resource]
) -> list[AnyOp]:
    """The removal of a single-valued item (`key`: "work", "whereabouts") said to be over
    ("I don't work at Google any more", "I'm no longer in Oslo") when it holds `value`;
    a value that is over and not held adds nothing."""
    want = {match_key(t) for t in tokens(value)}
    for item in items(resources, file, path):
        if item.item == key and want <= {match_key(t) for t in tokens(item.display or "")}:
            return [remove(file, path, item.item)]
    return []


def own_name_respelled(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """The user's own name spelt anew after a typo is owned ("argh autocorrect. PRIYA. with
    a y" with "Pria" held): a word of the statement that starts as the held name does
    and is not it."""
    said = " ".join(sentences)
    if not _TYPO.search(said) or any(
        isinstance(o, AppendOp | UpdateOp) and o.value.item == "name" for o in ops
    ):
        return []
    held = [i for i in items(resources, GENERAL, PEOPLE) if i.item == "name"]
    if len(held) != 1:
        return []
    old = (held[0].display or "").removeprefix("Name: ").strip()
    near = {
        w
        for w in re.findall(r"\b[A-Za-z][a-z]+\b|\b[A-Z]{3,}\b", said)
        if len(w) >= 3 and w[:3].lower() == old[:3].lower() and w.lower() != old.lower()
    }
    if not old or len(near) != 1:
        return []
    new = near.pop().capitalize()
    value = {"item": "name", "display": f"Name: {new}"}
    return [UpdateOp(operation="update", file=GENERAL, path=PEOPLE, value=value)]


_BACK_TO_NORMAL = re.compile(
    r"\bback to (?:normal|usual|the usual|regular|your (?:normal|usual|old)(?: \w+)?)"
    r"(?= (?:answers|replies|responses|mode|style|length|please|pls)\b)|"
    r"\byou can (?:go |switch |come )?back to (?:normal|usual|the usual|regular)\b",
    re.IGNORECASE,
)
_BACK_TO_A_LANGUAGE = re.compile(
    r"\bback to ([a-z]+)\b(?!\s+(?:class|classes|lessons?|lit|literature|homework|teacher|"
    r"course|exam|test)\b)",
    re.IGNORECASE,
)


def back_to_normal(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """Removals of the ways of answering a statement sends back to normal ("ok you can go
    back to normal answers lol"), or of those in another language than the one it goes
    back to ("back to english please 😅" after "answer me in spanish from now on")."""
    held = items(resources, GENERAL, "communication.style")
    if not held:
        return []
    added = {match_key(o.value.item) for o in ops if isinstance(o, AppendOp | UpdateOp)}
    out: list[RemoveOp] = []
    for sentence in sentences:
        if _BACK_TO_NORMAL.search(sentence):
            out.extend(remove(GENERAL, "communication.style", i.item) for i in held)
            continue
        for m in _BACK_TO_A_LANGUAGE.finditer(sentence):
            back = m.group(1).lower()
            if back not in SPOKEN:
                continue
            out.extend(
                remove(GENERAL, "communication.style", i.item)
                for i in held
                if any(t in SPOKEN and t != back for t in tokens(i.item.replace("_", " ")))
            )
    return [o for o in out if match_key(o.value.item) not in added]
