"""Episodic memory: chunk files, the chunking engine, the auto-linker, recall."""

from memagent.memory.chunks.chunking import Piece, detect_type, split_text
from memagent.memory.chunks.importer import load_messages
from memagent.memory.chunks.model import (
    CHUNK_TYPES,
    LINK_TYPES,
    Chunk,
    ChunkDraft,
    ChunkMetadata,
    Link,
)
from memagent.memory.chunks.store import ChunkStore

__all__ = [
    "CHUNK_TYPES",
    "LINK_TYPES",
    "Chunk",
    "ChunkDraft",
    "ChunkMetadata",
    "ChunkStore",
    "Link",
    "Piece",
    "detect_type",
    "load_messages",
    "split_text",
]
