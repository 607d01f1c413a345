"""A job's line: the role with its employer, read from the part of the statement that
says the job, when the model copied only one of them."""

from __future__ import annotations

import re

from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.negation import subclause

JOBS = (
    "teacher|nurse|doctor|engineer|developer|programmer|designer|lawyer|accountant|architect|"
    "pharmacist|dentist|vet|chef|cook|baker|farmer|pilot|firefighter|paramedic|electrician|"
    "plumber|carpenter|mechanic|journalist|writer|editor|librarian|scientist|researcher|"
    "professor|lecturer|student|consultant|manager|shift manager|analyst|barista|driver|"
    "artist|musician|photographer|therapist|surgeon|midwife"
)
"""Jobs a value the model read as another kind is plainly one of ("graphic designer" read
as an exercise, "a paramedic" as a condition)."""
JOB_WORD = re.compile(rf"(?:an? )?(?:[\w-]+ )?(?:{JOBS})s?", re.IGNORECASE)


def someone_in_the_job(value: str, clause: str) -> bool:
    """The job word names someone else at work, as the subject of what they did ("dentist
    has me on metronidazole", "my nurse says"), not the writer's job."""
    return bool(
        re.search(
            rf"(?:^\W*|\b(?:my|the|our|his|her|their|your|a|an)\s+){re.escape(value.strip())}"
            r"\s+(?:has|have|had|is|was|says|said|told|tells|wants|wanted|gave|gives|put|puts|"
            r"prescribed|thinks|reckons|reckoned|took|taken|signed|referred|suggested|asked)\b",
            clause,
            re.IGNORECASE,
        )
    )


_ROLE_AT = re.compile(
    r"\bI(?:'m| am)? (?:work as |working as )?(an? )?([a-z][\w -]{1,40}?)\s+(at|for|with|in)\s+"
    r"((?:an? |the )?[\w -]{1,40})$",
    re.IGNORECASE,
)


def job(value: str, clause: str, template: str) -> tuple[str, str]:
    """(value, template) of a job (`template`: the plain line's): when the model copied
    only the employer ("a fintech startup"), the role said before it comes too
    ("software engineer at a fintech startup")."""
    if match_key(value) == "retired":
        return value, "{V}"
    part = subclause(value, clause).strip(" .!")
    m = _ROLE_AT.search(part)
    if m is None or match_key(value) not in match_key(m.group(4)):
        return value, template
    role, at, where = m.group(2).strip(), m.group(3), m.group(4).strip()
    if match_key(role) in ("work", "working"):  # "I work at Spotify as a data analyst"
        employer = re.split(r"\s+as\s+(?=an?\s)", where, maxsplit=1)[0]
        said_as = re.search(r"\s+as\s+an?\s+([\w -]{2,40})$", where)
        if said_as:
            return f"{said_as.group(1).strip()} {at} {employer}", "Works as {v}"
        return value, "Works at {v}" if at in ("at", "for") else template
    text = f"{role} {at} {where}"
    return text, ("Works as {v}" if m.group(1) or "work" in part.lower() else "Work: {v}")
