"""What names a drink, so a taste the model reads is filed as a drink's or a food's.

Why: the 1.5B model files "irn bru" under foods and licorice under drinks. A value is a
drink when it, or it with the words after it, names one by kind or by brand ("flat
whites", "an iced hibiscus tea", "a monster on nights"), or when its clause says it is
drunk ("drink", "a mug of").
"""

from __future__ import annotations

import re

DRINKS = re.compile(
    r"\b(coffee|tea|latte|lattes|espresso|cappuccino|flat white|beers?|wines?|water|juice|"
    r"milk|sodas?|cola|coke|pepsi|cocktails?|whisky|whiskey|matcha|kombucha|smoothies?|lemonade|ipas?|"
    r"rooibos|chai|yerba mate|sparkling water|fizzy drinks?|soft drinks?|"
    r"ales?|lagers?|stouts?|cider|gin|vodka|rum|tequila|sake|soju|mocha|cocoa|"
    r"hot chocolate|energy drinks?|earl grey|english breakfast|darjeeling|assam|oolong|sencha|"
    r"chamomile|green tea|herbal tea|mint tea|iced tea|bubble tea|boba|americano|macchiato|"
    r"cortado|prosecco|champagne|bourbon|brandy|mezcal|negroni|spritz|martini|margaritas?|"
    r"seltzer|milkshakes?|lassi|kefir|drinks?|"
    r"cuppa|brew|bevv(?:y|ies)|tinnies|shandy|squash|cordial|sangria|pimm'?s|aperol|baileys|"
    r"guinness|ouzo|raki|palm wine|zobo|kvass|ayran|horchata|teh tarik|kopi|"
    r"irn[ -]?bru|red bull|monster(?! munch)|lucozade|relentless|rockstar|celsius|vimto|ribena|"
    r"fanta|sprite|dr\.? pepper|mountain dew|gatorade|powerade|yakult|horlicks|bovril|ovaltine|"
    r"tango|pellegrino|perrier)(?:e?s)?\b",
    re.IGNORECASE,
)
"""Drinks by kind and by name ("irn bru is life", "love a monster on nights"): a taste for
one is a drink's, however the clause says it."""
DRINKING = re.compile(
    r"\b(drink|drinks|drank|drinking|sip|sipping|cup|mug|glass|pint|bottle|brew)\b", re.I
)


def drink_named(value: str, clause: str) -> bool:
    """`value`, or it with the words after it in the clause, names a drink ("hibiscus"
    in "an iced hibiscus tea")."""
    named = re.search(rf"{re.escape(value)}(?:\s+[\w-]+){{0,2}}", clause, re.I)
    return bool(DRINKS.search(named.group(0) if named else value))
