"""The context bench's variants rewrite only an in-memory copy, the way they say."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from bench.recall_context import VARIANTS, Copy

from memagent.index import Doc, Index


class Letters:
    name = "letters"
    dim = 4

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = 1.0
        return out

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _index(tmp_path: Path) -> Index:
    idx = Index(tmp_path / "i.sqlite", Letters())
    idx.upsert(
        [
            Doc(
                doc_id=f"t{i}",
                kind="chunk",
                path=f"c/t{i}.json",
                content=text,
                conversation_id="c",
                created=float(i),
                source={"role": role, "id": f"t{i}"},
            )
            for i, (text, role) in enumerate(
                [
                    ("how was the concert", "user"),
                    ("lovely", "assistant"),
                    ("it was amazing", "user"),
                ]
            )
        ]
    )
    return idx


def _contexts(idx: Index) -> dict[str, str]:
    return dict(idx.conn.execute("SELECT doc_id, context FROM docs").fetchall())


def test_variants_change_the_copy_only(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    copy = Copy(idx)
    copy.use(VARIANTS["none"])
    assert set(_contexts(idx).values()) == {""}
    assert idx.conn.execute("SELECT count(*) FROM ctx_vectors").fetchone()[0] == 0
    copy.use(VARIANTS["keyword: replies lend and receive"])
    assert _contexts(idx)["t1"] == "how was the concert\nit was amazing"
    assert copy.ids("concert", 3, 10.0)[0] == "t0"
    copy.use(VARIANTS["keyword: previous turn only"])
    assert set(_contexts(idx).values()) == {""}  # the assistant sits between the two
    copy.use(VARIANTS["vectors: session mean 0.3"])
    assert idx.conn.execute("SELECT count(*) FROM ctx_vectors").fetchone()[0] == 3
    idx.close()
    on_disk = Index(tmp_path / "i.sqlite", Letters())  # the file was never touched
    assert on_disk.conn.execute("SELECT count(*) FROM ctx_vectors").fetchone()[0] == 3
    assert set(_contexts(on_disk).values()) == {""}  # people's turns beside replies only
