"""pgvector's text form of an embedding, both ways."""

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
