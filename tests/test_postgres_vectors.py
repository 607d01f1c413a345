"""pgvector's forms of an embedding: the text written and the binary form that
search reads (`vector_send`) give back the very floats stored."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from memagent.postgres.vectors import parse_vector, unpack_vector, vector_text


def test_binary_and_text_forms_read_back_the_same_floats(pg_url: str) -> None:
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((20, 384)).astype(np.float32)
    vecs[0, :3] = [0.0, -0.0, 1e-30]
    with psycopg.connect(pg_url) as conn:
        for vec in vecs:
            text = vector_text(vec)
            got_text, got_bin = conn.execute(
                "SELECT %s::vector::text, vector_send(%s::vector)", (text, text)
            ).fetchone()
            from_text = parse_vector(got_text)
            from_bin = unpack_vector(got_bin)
            assert from_text is not None and from_bin is not None
            assert from_bin.dtype == np.float32 and from_bin.shape == (384,)
            assert np.array_equal(from_bin, from_text)
            assert np.array_equal(from_bin, parse_vector(text))


def test_unpack_vector_refuses_a_truncated_or_foreign_value() -> None:
    assert unpack_vector(None) is None
    good = (3).to_bytes(2, "big") + b"\0\0" + np.array([1, 2, 3], dtype=">f4").tobytes()
    assert unpack_vector(good) is not None
    assert unpack_vector(good).tolist() == [1.0, 2.0, 3.0]  # type: ignore[union-attr]
    for bad in (good[:-1], good + b"\0", b"", b"\x00"):
        with pytest.raises(ValueError, match="not a pgvector binary vector"):
            unpack_vector(bad)
