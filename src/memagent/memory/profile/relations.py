"""Pets and relatives: one item per pet or person, keyed by who they are.

A person can have two daughters or three cats, so a pet's or a relative's item
is keyed by the relation *and* the name (`pet_cat_miso`, `family_daughter_ana`),
and a second name adds a second item. A few relations are one a person has one
of at a time (a wife, a mother: `ONE_OF`): those are keyed by the relation alone
(`family_wife`), so a new name updates the item. A correction ("Actually my dog
is called Nova now", "my cat's name is Miso, not Mocha") replaces the other
names of that relation. Items written before names were part of the key
(`pet_dog`, its display naming the pet) are read as that pet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memagent.memory.profile.item_keys import match_key, slug, tokens
from memagent.memory.profile.material import WRITER_WORDS

ANIMALS = (
    "dog",
    "cat",
    "puppy",
    "kitten",
    "parrot",
    "rabbit",
    "bunny",
    "hamster",
    "horse",
    "fish",
    "goldfish",
    "betta",
    "turtle",
    "tortoise",
    "snake",
    "lizard",
    "ferret",
    "guinea pig",
    "budgie",
    "pony",
    "bearded dragon",
    "gecko",
    "iguana",
    "chinchilla",
    "gerbil",
    "rat",
    "canary",
    "cockatiel",
    "cockatoo",
    "hedgehog",
    "axolotl",
    "labrador",
    "spaniel",
    "terrier",
    "collie",
    "poodle",
    "retriever",
    "dachshund",
    "beagle",
    "greyhound",
    "whippet",
    "lurcher",
    "corgi",
    "husky",
    "pug",
)
RELATIVES = (
    "wife",
    "husband",
    "partner",
    "boyfriend",
    "girlfriend",
    "fiancée",
    "fiancé",
    "fiancee",
    "fiance",
    "son",
    "daughter",
    "mom",
    "mum",
    "mother",
    "dad",
    "father",
    "sister",
    "brother",
    "grandma",
    "grandmother",
    "grandpa",
    "grandfather",
    "aunt",
    "uncle",
    "cousin",
    "niece",
    "nephew",
    "granddaughter",
    "grandson",
    "grandchild",
    "stepson",
    "stepdaughter",
    "baby",
    "kid",
    "child",
    "spouse",
)
ONE_OF = frozenset(
    {
        "wife",
        "husband",
        "partner",
        "boyfriend",
        "girlfriend",
        "fiancée",
        "fiancé",
        "fiancee",
        "fiance",
        "mom",
        "mum",
        "mother",
        "dad",
        "father",
        "spouse",
    }
)
"""Relations a person has one of at a time: a new name updates the item."""
_PARTNERED = (
    (re.compile(r"\bmarried to\b|\bmy spouse\b", re.I), "spouse"),
    (re.compile(r"\bengaged to\b", re.I), "fiance"),
    (re.compile(r"\b(dating|seeing|in a relationship with|going out with)\b", re.I), "partner"),
)
_IRREGULAR = {
    **{"children": "child", "puppies": "puppy", "bunnies": "bunny", "ponies": "pony"},
    **{"baby boy": "son", "baby girl": "daughter", "little boy": "son", "little girl": "daughter"},
    **{"missus": "wife", "missis": "wife", "wifey": "wife", "hubby": "husband", "bf": "boyfriend"},
    **{"gf": "girlfriend", "other half": "partner", "mam": "mum", "mammy": "mum", "mummy": "mum"},
    **{"mommy": "mom", "daddy": "dad", "nan": "grandma", "nana": "grandma", "gran": "grandma"},
    **{"granny": "grandma", "grandad": "grandpa", "granddad": "grandpa", "step-son": "stepson"},
    **{"step-daughter": "stepdaughter", "sis": "sister", "bro": "brother"},
}
"""Plurals, the words for a child that name the relation ("baby boy" is a son) and the
words chat uses for one ("the missus", "my hubby", "my nan")."""
RELATION_WORDS = (*RELATIVES, *_IRREGULAR, "kids", "lad", "lads", "boys", "girls", "fella", "folks")
"""Every word a person names a relative or partner by, chat's included."""
_CORRECTION = re.compile(
    r"\b(actually|now|renamed|any ?more|no longer|correction|i meant|not \w+,? but|"
    r"changed|wrong)\b|,\s*not\s+[A-Z]",
    re.IGNORECASE,
)
_ANOTHER = re.compile(r"\b(also|too|as well|another|second|third|new|both|two|three)\b", re.I)
_NAME_LIST = re.compile(r"\s*(?:,|&|\band\b)\s*")


def in_order(kind: str, value: str, name: str) -> tuple[str, str]:
    """(animal or relation, name) of a pet or relative the model read, the two swapped back
    when it put the name where the animal goes ("pet: Bess / collie")."""
    kinds_of = ANIMALS if kind == "pet" else RELATION_WORDS
    if name.lower() in kinds_of and value.lower() not in kinds_of:
        value, name = name, value
    return value, name


def an_animal(value: str, clause: str) -> bool:
    """`value` names an animal, or `clause` does ("our rescue Pip is a greyhound"), or the
    clause names it ("a zebra named Quixotic"): a pet read as a "fisherman" is no pet."""
    named = re.search(rf"\b{re.escape(value)}\s+(?:named|called)\b", clause, re.IGNORECASE)
    return bool(_AN_ANIMAL.search(value) or _AN_ANIMAL.search(clause) or named)


_AN_ANIMAL = re.compile(
    rf"\b(?:{'|'.join(ANIMALS)}|pet|tabby|moggy|kitty|pup|doggo|pooch|mutt|staff(?:ie|y)|"
    r"jack russell|cockapoo|labradoodle|cavapoo|shih tzu|chihuahua|shepherd|alsatian|rottweiler|"
    r"bulldog|frenchie|boxer|dalmatian|sheepdog|springer|cocker|pointer|setter|weimaraner|"
    r"vizsla|ragdoll|siamese|persian|maine coon|bengal|sphynx|tortie|rescue|bird|mouse|mice|"
    r"duck|chicken|hen|goat|pig|cow|sheep|lamb|donkey|alpaca|llama|tarantula|frog|toad)s?\b",
    re.IGNORECASE,
)


def singular(word: str) -> str:
    """`daughters` → `daughter`, `children` → `child` (a relation or an animal)."""
    w = word.strip().lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    known = {*ANIMALS, *RELATIVES}
    if w not in known and w.endswith("s") and w[:-1] in known:
        return w[:-1]
    return w


def partnered(clause: str) -> str | None:
    """The relation a clause names a partner by without a relation word ("I'm
    married to Dev": spouse; "engaged to": fiance; "dating": partner)."""
    for pattern, relation in _PARTNERED:
        if pattern.search(clause):
            return relation
    return None


def is_relation(word: str) -> bool:
    return singular(word) in {*ANIMALS, *RELATIVES}


def prefix(kind: str, relation: str) -> str:
    """The key every item of one relation starts with (`pet_dog`, `family_son`)."""
    return f"{kind}_{slug(singular(relation))}"


def key(kind: str, relation: str, name: str) -> str:
    """The item key of a pet or relative (module doc)."""
    rel = singular(relation)
    if kind == "family" and rel in ONE_OF:
        return prefix(kind, rel)
    return f"{prefix(kind, rel)}_{slug(name)}"


def split_names(name: str) -> list[str]:
    """`"Ana and Bea"` → `["Ana", "Bea"]`: each name is an item of its own, without the
    possessive a name was read with ("my sister Hana's wedding": Hana)."""
    names = (re.sub(r"['\u2019]s$", "", n.strip(" .")) for n in _NAME_LIST.split(name))
    return [n for n in names if n]


def replaces(clause: str) -> bool:
    """The clause corrects a name rather than adding one ("Actually … now")."""
    return bool(_CORRECTION.search(clause)) and not _ANOTHER.search(clause)


def names_in(display: str) -> set[str]:
    return {match_key(t) for t in tokens(display)}


def same_relation(item_key: str, kind: str, relation: str) -> bool:
    """`item_key` is one of this relation's items, in the keys of now or of before."""
    p = match_key(prefix(kind, relation))
    mk = match_key(item_key)
    return mk == p or mk.startswith(p + "_")


def already_named(
    items: Sequence[tuple[str, str]], kind: str, relation: str, name: str
) -> str | None:
    """The key of the item (`(key, display)` pairs) that already names `name` for
    this relation, if any (an older `pet_dog` item says the name in its display)."""
    wanted = match_key(key(kind, relation, name))
    bare = match_key(prefix(kind, relation))
    said = {match_key(t) for t in tokens(name)}
    for item_key, display in items:
        mk = match_key(item_key)
        if mk == wanted != bare or (mk == bare and said and said <= names_in(display)):
            return item_key
    return None


THEIR_PET = re.compile(
    r"^\W*(?:my|our)\s+(?:best\s+)?(?:friend|boss|colleague|coworker|co-worker|roommate|"
    r"flatmate|neighbou?r|landlord|landlady|cousin|aunt|uncle)(?:\s+[A-Z]\w+)?\s+"
    r"(?:just\s+)?(?:got|has|have|adopted|bought|owns|rescued|is getting)\b",
    re.IGNORECASE,
)
"""A pet someone else has ("my friend Jonas just got a puppy named Biscotti"): not the
writer's."""
_NEIGHBOURS_PET = re.compile(
    rf"\b(?:the|a|my|our)\s+(?:neighbou?rs?|next[- ]door|neighbou?rs?['\u2019]s?)\s+"
    rf"(?:[\w-]+\s+)?(?:{'|'.join(ANIMALS)})s?\b",
    re.IGNORECASE,
)
_OWN_PET = re.compile(rf"\b(?:my|our)\s+(?:[\w-]+\s+)?(?:{'|'.join(ANIMALS)})s?\b", re.I)


def their_pet(clause: str) -> bool:
    """The pet `clause` tells of is someone else's: a friend's who got one (`THEIR_PET`),
    or the neighbours' ("the neighbours cat keeps coming into our garden") where the
    writer names no animal of their own."""
    if THEIR_PET.search(clause):
        return True
    return bool(_NEIGHBOURS_PET.search(clause)) and not _OWN_PET.search(clause)


_OWNED_BY_ANOTHER = re.compile(
    rf"\b(?!(?:my|our|mine)\b)(?:[a-z]+['\u2019]s|his|her|their)\s+(?:[\w-]+\s+)?"
    rf"(?:{'|'.join(ANIMALS)})s?\b",
    re.IGNORECASE,
)


def anothers_pet(statement: str) -> bool:
    """A statement that tells of someone else's animal and never of the writer ("client's
    dog bit the courier … dog is a 4yo staffie called Bruno"): no pet of the writer's."""
    return bool(_OWNED_BY_ANOTHER.search(statement)) and not WRITER_WORDS.search(statement)


def told_of_a_relative(name: str, clause: str) -> bool:
    """The model read the fact as a relative's (`name` is "mum", "my sister") and the
    clause names that relative ("my mum keeps sending me recipes for liver and onions"):
    theirs, not the writer's."""
    said = name.strip().lower().removeprefix("my ").removeprefix("our ")
    if not said or singular(said) not in RELATIVES:
        return False
    if re.search(r"\b(?:me|I) and (?:my|our)\b|\bboth\b|\bwe\b|\bus\b", clause, re.I):
        return False  # "me and my sister both love sushi": the writer's too
    return re.search(rf"\b(?:my|our)\s+{re.escape(said)}\b", clause, re.IGNORECASE) is not None


_MINDS_PETS = re.compile(
    r"\b(?:walker|sitter|groomer|trainer|vet|breeder|minder|boarder|daycare|kennels?)s?$", re.I
)


def minds_pets(value: str) -> bool:
    """`value` names someone who looks after animals, not one ("dog walker cancelled AGAIN
    so Pepper (my beagle) is under the desk": Pepper is the beagle)."""
    return bool(_MINDS_PETS.search(value.strip()))
