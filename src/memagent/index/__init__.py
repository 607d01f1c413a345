"""The derived index of all memory (chunks, vault notes, profile facts): SQLite
FTS5 + float32 vectors + tags + links + access stats, rebuildable from files;
and recall's reading of a query (`QueryFacts`) and its ranking (signals).

Sits below the memory layer: it reads memory files generically and never
imports `memagent.memory`.
"""

from memagent.index.asking import (
    about_user,
    is_personal,
    is_question,
    is_small_talk,
    looks_like_request,
)
from memagent.index.candidates import Candidates, Pool
from memagent.index.documents import CHUNK, FACT, KINDS, NOTE, Doc, parse_time
from memagent.index.owner import BROADER, ENTITIES, RELATIONS, Focus, focus_of
from memagent.index.params import SearchParams, search_params
from memagent.index.query import MAX_QUERY_CHARS, QueryFacts, check_query, facts_of, query_terms
from memagent.index.roles import non_fact, said_by_assistant
from memagent.index.search import Filters, Hit, rank, search
from memagent.index.signals import SIGNALS, Signal
from memagent.index.sqlite import Index, Row, read_only_index_copy
from memagent.index.sync import SyncReport, index_file, sync, sync_paths
from memagent.index.vectors import ExactVectors, VectorSearch
from memagent.index.why import Boost, Why

__all__ = [
    "BROADER",
    "CHUNK",
    "ENTITIES",
    "FACT",
    "KINDS",
    "MAX_QUERY_CHARS",
    "NOTE",
    "RELATIONS",
    "SIGNALS",
    "Boost",
    "Candidates",
    "Doc",
    "ExactVectors",
    "Filters",
    "Focus",
    "Hit",
    "Index",
    "Pool",
    "QueryFacts",
    "Row",
    "SearchParams",
    "Signal",
    "SyncReport",
    "VectorSearch",
    "Why",
    "about_user",
    "check_query",
    "facts_of",
    "focus_of",
    "index_file",
    "is_personal",
    "is_question",
    "is_small_talk",
    "looks_like_request",
    "non_fact",
    "parse_time",
    "query_terms",
    "rank",
    "read_only_index_copy",
    "said_by_assistant",
    "search",
    "search_params",
    "sync",
    "sync_paths",
]
