"""pgvector's text form of an embedding, both ways, and its binary form."""

from __future__ import annotations

import json

import numpy as np
import numpy.typing as npt


def vector_text(vec: npt.NDArray[np.float32]) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vec.ravel()) + "]"


def parse_vector(text: str | None) -> npt.NDArray[np.float32] | None:
    if text is None:
        return None
    return np.asarray(json.loads(text), dtype=np.float32)


def unpack_vector(data: bytes | None) -> npt.NDArray[np.float32] | None:
    """A vector from pgvector's binary form, `vector_send(v)` (int16 dimensions,
    int16 unused, then big-endian float4s): the stored floats exactly, at a small
    fraction of the cost of its text (a recall reads a hundred of them)."""
    if data is None:
        return None
    dim = int.from_bytes(data[:2], "big")
    if len(data) != 4 + 4 * dim:
        raise ValueError(f"not a pgvector binary vector ({len(data)} bytes for {dim} dimensions)")
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)
