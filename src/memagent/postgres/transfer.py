"""Files in and out of the database: a user's memory as a memory home.

`export_home` writes the local file layout (chunk files, profile resource
files, notes, conversations and traces, the user's API keys as hashes in
`server/keys.json`, the ops log) into a new folder, so a user can always take
their memory with them and open it with every local command. `import_home` loads such a home
into the database for one user in a single transaction: everything or nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memagent.api_keys import KeyStore
from memagent.core import Config, Conflict, CorruptFile, InvalidInput, MemoryHome, OpRecord
from memagent.core.state import FileState
from memagent.memory.chunks.model import Chunk
from memagent.memory.profile.store import ProfileStore
from memagent.memory.vault import Vault
from memagent.postgres.api_keys import PgKeyStore, insert_keys
from memagent.postgres.chunks import PgChunkStore
from memagent.postgres.db import Database
from memagent.postgres.ops import PgOpsLog
from memagent.postgres.profile import PgProfileStore
from memagent.postgres.state import PgState
from memagent.postgres.vault import PgVault

ACTOR = "export"
ACTOR_IMPORT = "import"
STATE_FOLDERS = ("conversations", "traces")


def _ops_text(records: list[OpRecord]) -> str:
    lines = [
        json.dumps(
            {k: v for k, v in r.model_dump().items() if v is not None or k in ("before", "after")},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        for r in records
    ]
    return "".join(line + "\n" for line in lines)


def export_home(
    db: Database, user: str, out: Path, *, config: Config | None = None
) -> dict[str, int]:
    """Write `user`'s memory as a new memory home at `out` (which must not exist
    or be an empty folder). Returns counts of what was written."""
    out = out.expanduser().absolute()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Conflict(f"{out} exists and is not an empty folder; export writes a new home")
    chunks = PgChunkStore(db, user, config=config, embeddings=False)
    profile = PgProfileStore(db, user, config=config)
    history = PgOpsLog(db, user).read()
    all_chunks = list(chunks.all_chunks())
    texts = profile.texts()
    vault = PgVault(db, user, config=config)
    notes = vault.all_notes()
    folders = [rel for rel, kind in vault.walk() if kind == "dir"]
    state = PgState(db, user)
    documents = {n: state.read(n) for f in STATE_FOLDERS for n in state.names(f)}
    keys = PgKeyStore(db).of_user(user)
    home = MemoryHome.open(out)
    storage = home.storage
    with storage.lock():
        # The database's history first, so the home's log reads oldest to newest.
        storage.write_text(
            home.layout.ops_log, _ops_text(history), actor=ACTOR, op="export", meta={"user": user}
        )
        home.init(actor=ACTOR)
        for chunk in all_chunks:
            storage.write_json(
                chunk.rel_path, chunk.model_dump(mode="json"), actor=ACTOR, op="export"
            )
        for name, text in texts.items():
            storage.write_text(home.layout.profile / name, text, actor=ACTOR, op="export")
        for rel in folders:
            storage.mkdir(home.layout.vault / rel, actor=ACTOR, op="export")
        for rel, data in notes:
            storage.write_bytes(home.layout.vault / rel, data, actor=ACTOR, op="export")
        for name, data in documents.items():
            storage.write_bytes(home.layout.state / name, data, actor=ACTOR, op="export")
    KeyStore(home.root / "server").import_keys(keys)
    return {
        "chunks": len(all_chunks),
        "profile": len(texts),
        "notes": len(notes),
        "state": len(documents),
        "keys": len(keys),
        "ops": len(history),
    }


def _read_chunks(home: MemoryHome) -> list[Chunk]:
    out: list[Chunk] = []
    for path in sorted(home.layout.chunks.glob("*/*.json")):
        rel = path.relative_to(home.root).as_posix()
        try:
            chunk = Chunk.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, ValidationError) as exc:
            raise CorruptFile(rel, f"not a valid chunk: {exc}") from exc
        if chunk.rel_path != rel:
            raise CorruptFile(rel, f"chunk {chunk.id} belongs at {chunk.rel_path}")
        out.append(chunk)
    return out


def import_home(
    db: Database,
    user: str,
    source: Path,
    *,
    config: Config | None = None,
    embeddings: bool | None = None,
) -> dict[str, int]:
    """Load the memory home at `source` as `user`'s memory. Every file is read and
    validated first; then one transaction writes it all. A user who already has
    memory in the database is refused (`Conflict`), so nothing is overwritten."""
    home = MemoryHome.open(source)
    if not home.exists:
        raise InvalidInput(f"{home.root} is not a memory home")
    chunks = _read_chunks(home)
    local_profile = ProfileStore(home)
    resources = local_profile.load_all()
    # the files' own text (load_all checked each), so the rows read like the files
    texts = {n: local_profile.path_of(n).read_text(encoding="utf-8") for n in resources}
    from memagent.core import read_ops

    history = list(read_ops(home.layout.ops_log))
    local_vault = Vault(home)
    walked = list(local_vault.walk())
    notes = [(rel, local_vault.read_bytes(rel)) for rel, k in walked if k == "file"]
    folders = [rel for rel, kind in walked if kind == "dir"]
    local_state = FileState(home)
    documents = {n: local_state.read(n) for f in STATE_FOLDERS for n in local_state.names(f)}
    keys = [k for k in KeyStore(home.root / "server").list() if k.user == user]
    store = PgChunkStore(db, user, config=config or home.config, embeddings=embeddings)
    profile = PgProfileStore(db, user, config=config or home.config, embedder=store.embedder)
    ops = PgOpsLog(db, user)
    vectors: Any = None
    if store.embedder is not None and chunks:
        vectors = store.embedder.embed([c.content for c in chunks])
    with db.locked(user, "chunks") as conn, db.locked(user, "profile"):
        taken = conn.execute(
            "SELECT (SELECT count(*) FROM chunks WHERE user_id = %s) + "
            "(SELECT count(*) FROM profile_resources WHERE user_id = %s)",
            (user, user),
        ).fetchone()
        if taken and taken[0]:
            raise Conflict(f"user {user!r} already has memory in the database")
        for rec in history:
            ops.append(
                actor=rec.actor,
                op=rec.op,
                path=rec.path,
                before=rec.before,
                after=rec.after,
                meta=rec.meta,
                ts=rec.ts,
            )
        for i, chunk in enumerate(chunks):
            vec = vectors[i : i + 1] if vectors is not None else None
            store.save(chunk, op="import", vec=vec)
        for name, resource in resources.items():
            profile.import_resource(conn, resource, texts[name])
        vault = PgVault(
            db, user, config=config or home.config, actor=ACTOR_IMPORT, embedder=store.embedder
        )
        for rel in folders:
            vault.mkdir(rel)
        for rel, data in notes:
            vault.write_bytes(rel, data, op="import")
        state = PgState(db, user)
        for name, data in documents.items():
            state.write(name, data, actor=ACTOR_IMPORT, op="import")
        added = insert_keys(conn, keys)
    return {
        "chunks": len(chunks),
        "profile": len(resources),
        "notes": len(notes),
        "state": len(documents),
        "keys": added,
        "ops": len(history),
    }
