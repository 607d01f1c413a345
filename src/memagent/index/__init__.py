"""The derived index of all memory (chunks, vault notes, profile facts): SQLite
FTS5 + float32 vectors + tags + links + access stats, rebuildable from files.

Sits below the memory layer: it reads memory files generically and never
imports `memagent.memory`.
"""

from memagent.index.documents import CHUNK, FACT, KINDS, NOTE, Doc, parse_time
from memagent.index.search import Filters, Hit, SearchParams, query_terms, search
from memagent.index.store import Index, Row, read_only_index_copy
from memagent.index.sync import SyncReport, index_file, sync, sync_paths
from memagent.index.vectors import ExactVectors, VectorSearch

__all__ = [
    "CHUNK",
    "FACT",
    "KINDS",
    "NOTE",
    "Doc",
    "ExactVectors",
    "Filters",
    "Hit",
    "Index",
    "Row",
    "SearchParams",
    "SyncReport",
    "VectorSearch",
    "index_file",
    "parse_time",
    "query_terms",
    "read_only_index_copy",
    "search",
    "sync",
    "sync_paths",
]
