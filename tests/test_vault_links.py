from __future__ import annotations

import pytest

from memagent.core import InvalidInput, MemoryHome, NotFound
from memagent.memory.vault import Vault, parse_link

JANE = """---
aliases: [JD, "Janie"]
---
# Jane Doe

Colleague.

## Work
Leads Atlas.

### Details
```
# not a heading
```
Budget owner.

## Family
Two kids. ^kids

- likes tea ^tea
"""


@pytest.fixture
def vault(home: MemoryHome) -> Vault:
    v = Vault(home)
    v.create("entities/jane_doe.md", JANE)
    v.create("projects/atlas-plan.md", "# The Atlas Plan\n\nSteps.\n")
    v.create("archive/entities/jane_doe.md", "# Old Jane\n")
    return v


def test_parse_link_parts() -> None:
    wl = parse_link("[[Jane Doe#Work#Details|Jane]]")
    assert (wl.target, wl.headings, wl.alias, wl.block) == (
        "Jane Doe",
        ("Work", "Details"),
        "Jane",
        None,
    )
    assert parse_link("![[note#^abc]]").block == "abc"
    assert parse_link("plain name").target == "plain name"
    for bad in ("[[]]", "[[#Work]]", "[[a]] extra [[b]]", "[[a"):
        with pytest.raises(InvalidInput):
            parse_link(bad)


@pytest.mark.parametrize(
    "link",
    [
        "[[entities/jane_doe]]",
        "[[entities/jane_doe.md]]",
        "[[Jane Doe]]",
        "[[jane_doe]]",
        "[[JANE-DOE]]",
        "[[jd]]",
        "[[Janie|my colleague]]",
    ],
)
def test_resolves_to_the_same_note(vault: Vault, link: str) -> None:
    assert vault.go_to_link(link).path == "entities/jane_doe.md"


def test_name_match_prefers_the_shortest_path(vault: Vault) -> None:
    out = vault.go_to_link("[[jane doe]]").to_json()
    assert out["path"] == "entities/jane_doe.md"
    assert out["other_matches"] == ["archive/entities/jane_doe.md"]
    assert out["title"] == "Jane Doe" and out["content"] == JANE


def test_title_match(vault: Vault) -> None:
    assert vault.go_to_link("[[the atlas plan]]").path == "projects/atlas-plan.md"
    assert vault.go_to_link("[[Atlas Plan]]").path == "projects/atlas-plan.md"


def test_heading_section(vault: Vault) -> None:
    out = vault.go_to_link("[[Jane Doe#work|Jane]]").to_json()
    assert out["heading"] == "work" and out["alias"] == "Jane"
    assert out["content"].startswith("## Work\nLeads Atlas.")
    assert "Budget owner." in out["content"] and "## Family" not in out["content"]
    nested = vault.go_to_link("[[Jane Doe#Work#Details]]").content
    assert nested.startswith("### Details") and "Budget owner." in nested
    family = vault.go_to_link("[[Jane Doe#Family]]").content
    assert family.startswith("## Family") and family.endswith("- likes tea ^tea\n")


def test_heading_inside_code_fence_is_ignored(vault: Vault) -> None:
    with pytest.raises(NotFound, match="no heading"):
        vault.go_to_link("[[Jane Doe#not a heading]]")


def test_block_reference(vault: Vault) -> None:
    assert vault.go_to_link("[[Jane Doe#^kids]]").content == "Two kids. ^kids"
    assert vault.go_to_link("[[Jane Doe#^tea]]").content == "- likes tea ^tea"
    with pytest.raises(NotFound, match="no block"):
        vault.go_to_link("[[Jane Doe#^nope]]")


def test_not_found_suggests(vault: Vault) -> None:
    with pytest.raises(NotFound, match=r"did you mean \[\[entities/jane_doe\]\]"):
        vault.go_to_link("[[entities/jane_do]]")
    with pytest.raises(NotFound, match="no note matches"):
        vault.go_to_link("[[Nobody At All]]")


def test_hostile_link_targets_stay_inside(vault: Vault) -> None:
    for link in ("[[../config.toml]]", "[[/etc/passwd]]", "[[a\x00b]]"):
        with pytest.raises(NotFound):
            vault.go_to_link(link)
    with pytest.raises(InvalidInput, match="at most"):
        vault.go_to_link("[[" + "x" * 100_000 + "]]")
    with pytest.raises(InvalidInput):
        vault.go_to_link(5)
