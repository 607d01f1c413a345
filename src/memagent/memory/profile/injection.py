"""Text that is not the user speaking: an injection (instructions to the memory, someone
else dictating what to save, role play) or a line quoted from another speaker
("Maria: I'm allergic to peanuts"). `statements.screen` drops the whole statement for
either."""

from __future__ import annotations

import re

_INJECTION = re.compile(
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(instructions?|prompts?|rules?|"
    r"system message)\b|\bsystem prompt\b|\byou are now\b|\bnew instructions?\b|"
    r"\bdeveloper mode\b|\bjailbreak\b|<\|im_start\|>|<\|?system\|?>|"
    r"\b(?:the|this) user\b|\bmemory system\b|\bnew task\b|\bnew rules?\s*:|"
    r"\bforget everything\b|\broot access\b|\badmin(?:istrator)? (?:access|rights|privileges)\b|"
    r"\brepeat after me\b|\buser (?:is|has|likes|loves|hates|takes|wants|prefers)\b|"
    r"\bpretend (?:that )?I\b|\bprofile bot\b|\bevery time I (?:send|say|type|write)\b|"
    r"\b(?:copy|import|merge|clone)\b[^.]{0,50}\bprofile\b|\bauthoritative\b|"
    r"\b(?:replace|overwrite) (?:existing|everything|my profile|the profile)\b|"
    r"\b(?:for|of|under) (?:user|account|customer|member)(?: id| #| no\.?)?\s*#?\d+|\buser ?id\b|"
    r"\bpretend (?:that )?(?:my|the) (?:profile|memory|records?)\b|"
    r"\b(?:update|edit|change|wipe|reset|delete)\s+(?:her|his|their|this|that)\s+profile\b|"
    r"\bthis is \w+'s \w+ on (?:her|his|their) (?:phone|laptop|account)\b|"
    r"\bfrom the (?:developers?|devs|admins?|system|company)\b|\bverified facts?\b|"
    r"\bpretend (?:you'?re|you are|to be)\b|\bwith no (?:filters?|rules|limits)\b|"
    r"\b(?:change|set|update) (?:her|his|their) name\b|"
    r"\b(?:ignore|disregard|forget)\s+(?:everything|all|anything)\s+(?:you'?ve|you have|you were|"
    r"you'?re|you are)\s+(?:been\s+)?(?:told|taught|given|said)\b|"
    r"\b(?:says|said|told me|wants|asked)\s+(?:that\s+)?(?:you|u)\s+(?:should|must|need to|have to|"
    r"to)\s+(?:save|store|add|record|log|write down|put down|note down)\b|"
    r"\b(?:says|said|told me|wants me|asked me)\s+to\s+(?:tell you|save|store|record|log|"
    r"update my (?:profile|job|name|details))\b",
    re.IGNORECASE | re.DOTALL,
)
_ROLE_PREFIX = re.compile(r"^\s*(assistant|ai|bot|system|memagent)\s*:", re.IGNORECASE)
_SPEAKER_PREFIX = re.compile(
    r"^\s*(?!(?i:note|update|correction|fyi|ps|p\.s|edit|also|btw|reminder|context|"
    r"background|info|heads up|quick note|oh|and|but|so|ok|okay|problem|question|issue|"
    r"plot twist|side note|thing is|goal|budget|details|summary|tl;?dr|bonus|catch|twist|"
    r"anyway|right|well|sadly|news|good news|bad news|request|situation|story|status|"
    r"questions)\s*:)"
    r"(?!I\b|I'm\b)[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?\s*:\s"
)
"""`Maria: I'm allergic to peanuts.`: a line quoted from someone else (a chat export,
another user), not the writer speaking."""


def injected(text: str) -> bool:
    """`text` carries instructions to the memory rather than something said."""
    return bool(_INJECTION.search(text))


def another_speaker(text: str) -> bool:
    """`text` opens as another speaker's line ("assistant:", "Maria: …")."""
    return bool(_ROLE_PREFIX.match(text) or _SPEAKER_PREFIX.match(text))
