"""A job: the writer's job as fixed phrasings say it ("I'm a nurse", "ICU nurse here",
"retired in march"), a job word the model read as another kind, and a job's line, the
role with its employer, read from the part of the statement that says the job, when the
model copied only one of them."""

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
    if match_key(role.split()[0]) in ("work", "working"):  # "I work at Spotify as a data analyst"
        employer = re.split(r"\s+as\s+(?=an?\s)", where, maxsplit=1)[0]
        said_as = re.search(r"\s+as\s+an?\s+([\w -]{2,40})$", where)
        if said_as:
            return f"{said_as.group(1).strip()} {at} {employer}", "Works as {v}"
        return value, "Works at {v}" if at in ("at", "for") else template
    text = f"{role} {at} {where}"
    return text, ("Works as {v}" if m.group(1) or "work" in part.lower() else "Work: {v}")


_RETIRED = re.compile(
    r"\bI(?:'m| am|'ve| have)?\s+(?:an? )?(?:just |recently |finally |now |officially |fully )?"
    r"retired\b"
    r"(?! from\b)|^\W*(?:just |recently |finally |officially )?retired\b"
    r"(?!\s+(?:from|the|my|his|her|our|their|a|an|it|that|this|those|these)\b)",
    re.IGNORECASE,
)
""""I retired in January", "I'm retired": no job now, which is the work fact."""
_WORK = re.compile(
    r"\b(?:I (?:work|now work|retrained|re-trained|have retrained|'ve retrained|qualified|'ve "
    r"qualified|have qualified|(?:just )?started|'ve started|have started)|"
    r"(?:^|[,;]\s*)\W*(?:just )?started|\b(?:new|got a) job|"
    r"\b[Jj]oined [A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*)*) as an? ([a-z][\w -]{1,40}?)"
    r"(?= at | for | in | when |[,.;!]|$| now\b| last\b| (?:\w+ )?ago\b)"
)
OCCUPATIONS = (
    "teacher|nurse|doctor|engineer|developer|programmer|designer|lawyer|solicitor|"
    "accountant|architect|pharmacist|dentist|vet|veterinarian|chef|cook|baker|butcher|"
    "farmer|pilot|firefighter|paramedic|electrician|plumber|carpenter|builder|mechanic|"
    "journalist|writer|editor|librarian|scientist|researcher|professor|lecturer|tutor|"
    "student|consultant|manager|analyst|cashier|waiter|waitress|barista|bartender|driver|"
    "police officer|soldier|artist|musician|photographer|therapist|psychologist|"
    "social worker|translator|secretary|receptionist|entrepreneur|surgeon|midwife|"
    "physiotherapist|optician|hairdresser|cleaner|caregiver|carer|nanny|salesperson|"
    "recruiter|banker|economist|statistician|technician|civil servant|postman|courier|"
    "dev|sre|sysadmin|coder|pharmacy tech|lab tech|vet tech|founder|porter|welder|joiner|"
    "plasterer|decorator|gardener|childminder|care worker|support worker|radiographer|"
    "dietitian|paralegal|clerk|actor|dancer|singer|sergeant|constable|detective|inspector|"
    "scaffolder|roofer|bricklayer|labourer|postie|care assistant|teaching assistant|"
    "healthcare assistant|shop assistant|surveyor|dispatcher|machinist|miner|operator|"
    "supervisor|foreman|operative|picker|packer|security guard|bouncer|cabbie|cab driver|"
    "sparky|brickie|fitter|glazier|tiler|locksmith|handyman|groundworker|landscaper|"
    "tree surgeon|caretaker|chippy"
)
"""Common jobs: "I'm a teacher" is a job; "I'm a big fan" or "I'm a night owl" is not."""
_IM_A = re.compile(
    rf"\bI(?:'m| am) an? ((?:[a-z0-9-]+ ){{0,3}}(?:{OCCUPATIONS})(?: (?:practitioner|assistant|"
    rf"manager|technician|specialist|officer|supervisor|lead))?)\b(?!['-])",
    re.IGNORECASE,
)
_AS_JOB = re.compile(rf"\bI work (?:as|like) ((?:[a-z0-9-]+ )?(?:{OCCUPATIONS}))\b", re.I)
"""'I work like nurse in the hospital', 'I work as nurse': a job said without its article."""
_JOB_HERE = re.compile(
    rf"(?:^|[.!?]\s+)\W*(?:(?:hi|hey|hello|hiya)\W+)?(?:an? )?"
    rf"(?!(?:the|my|his|her|our|your|their|this|that)\b)"
    rf"((?:[A-Za-z0-9-]+ ){{0,2}}(?:{OCCUPATIONS}))(?: here| by trade|,? \d+ (?:yrs|years) in)\b"
    rf"(?!\s+(?:is|was|says|said))|"
    rf"(?:^\W*|[,.;!]\s*|\bI'?m |\bI am )(?:now )?(?:officially|finally|fully) (?:a |an )?"
    rf"((?:[a-z0-9-]+ ){{0,2}}(?:{OCCUPATIONS}))\b(?!['-])|"
    rf"(?:\bI(?:'m| am) |(?:^|[.,;!]\s*)(?:and )?)(?:starting|beginning|start) (?:work )?as an? "
    rf"((?:[a-z0-9-]+ ){{0,2}}(?:{OCCUPATIONS}))\b|"
    rf"\bit'?s [A-Z][a-z'-]+,?\s+(?:the |your )?((?:[a-z0-9-]+ )?(?:{OCCUPATIONS}))\b",
    re.IGNORECASE,
)
"""'ICU nurse here', 'plumber by trade', 'mechanic, 20 yrs in the trade', 'officially a
registered nurse now', 'starting as a site inspector monday', "its Jon, cabbie in Nottingham":
the writer's job said without "I'm a"."""


def job_said(sentence: str) -> str | None:
    """The writer's job a fixed phrasing says in `sentence` ("I work as a nurse", "I'm a
    backend dev", "ICU nurse here"), "retired", or None."""
    m = _WORK.search(sentence) or _IM_A.search(sentence) or _AS_JOB.search(sentence)
    m = m or _JOB_HERE.search(sentence)
    if m is not None:
        said = next(g for g in m.groups() if g)
        return None if A_SKILL.fullmatch(said) else said
    return "retired" if _RETIRED.search(sentence) else None


A_SKILL = re.compile(
    r"(?:(?:a|an|very|really|pretty|quite|such a)\s+)?(?:decent|good|bad|terrible|great|rubbish|"
    r"keen|amateur|lazy|competent|confident|average|awful|hopeless|enthusiastic|natural|messy|"
    r"better|worse|slow|fast|nervous|careful|fussy|picky|sloppy|shocking|nightmare|massive)\s+"
    r"(?:cook|baker|driver|writer|singer|dancer|gardener|artist|photographer|musician|student)",
    re.IGNORECASE,
)
""""I'm a decent cook", "a nervous driver": how well the writer does a thing, not a job."""
