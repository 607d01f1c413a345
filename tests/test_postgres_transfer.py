"""Export / import-home carry everything a user has in the database: chunks and
profile (as before), and notes, folders, conversations, traces and the user's
API keys (hashes only); a home with a bad note loads nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from typer.testing import CliRunner

from memagent.agent import Conversations
from memagent.api_keys import KeyStore
from memagent.cli import app as cli_app
from memagent.core import InvalidInput, MemoryHome
from memagent.memory.vault import Vault
from memagent.postgres import Database, PgKeyStore, PgState, PgVault
from memagent.postgres.transfer import import_home


@pytest.fixture(scope="module")
def other_url(pg_url: str) -> Iterator[str]:
    """A second, empty database (a schema of its own): the machine moved to."""
    schema = f"move_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in pg_url else "?"
    yield f"{pg_url}{sep}options={quote(f'-csearch_path={schema},public')}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_export_then_import_carries_notes_state_and_keys(
    pg_url: str, other_url: str, tmp_path: Path
) -> None:
    user = f"t-{uuid.uuid4().hex[:10]}"
    with Database.open(pg_url, max_size=2) as db:
        vault = PgVault(db, user)
        vault.ensure_starters()
        vault.create("entités/Zoë.md", "# Zoë\nlikes [[Ana]]\n")
        vault.mkdir("empty/inside")
        home = MemoryHome.open(tmp_path / "scratch")
        convs = Conversations(home, PgState(db, user))
        conv = convs.new()
        convs.append(conv, "hello", "hi")
        PgState(db, user).write("traces/t-0001.json", b'{"turn": 1}', actor="agent", op="trace")
        key, record = PgKeyStore(db).create(user=user, label="phone")
        PgKeyStore(db).create(user=f"{user}-other")  # someone else's key stays behind
    out = tmp_path / "exported"
    runner = CliRunner()
    result = runner.invoke(
        cli_app, ["export", "--store", pg_url, "--user", user, "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert (counts["notes"], counts["state"], counts["keys"]) == (2, 2, 1)
    # an ordinary home: local commands read the notes, the conversation and the keys
    exported = MemoryHome.open(out)
    assert Vault(exported).read("entités/Zoë.md").startswith("# Zoë")
    assert Vault(exported).dir_exists("empty/inside")
    assert Conversations(exported).load(conv.id).messages[0].content == "hello"
    keys = KeyStore(out / "server")
    assert [k.id for k in keys.list()] == [record.id] and keys.verify(key) is not None
    assert key not in (out / "server" / "keys.json").read_text()  # the hash, never the key

    result = runner.invoke(
        cli_app, ["import-home", str(out), "--store", other_url, "--user", user, "--keyword-only"]
    )
    assert result.exit_code == 0, result.output
    with Database.open(other_url, max_size=1) as moved:
        assert PgVault(moved, user).read("entités/Zoë.md").startswith("# Zoë")
        assert PgVault(moved, user).dir_exists("empty/inside")
        assert Conversations(home, PgState(moved, user)).load(conv.id).turns == 1
        assert PgState(moved, user).names("traces") == ["traces/t-0001.json"]
        assert PgKeyStore(moved).verify(key) is not None  # the same key works there


def test_a_home_with_a_bad_note_imports_nothing(pg_url: str, tmp_path: Path) -> None:
    from memagent.setup import init_home

    home = MemoryHome.open(tmp_path / "h")
    init_home(home)
    (home.layout.vault / "fine.md").write_text("fine")
    (home.layout.vault / "nul.md").write_bytes(b"bad\x00note")
    user = f"t-{uuid.uuid4().hex[:10]}"
    with Database.open(pg_url, max_size=2) as db:
        with pytest.raises(InvalidInput, match="NUL"):
            import_home(db, user, home.root, embeddings=False)
        assert PgVault(db, user).all_notes() == []
