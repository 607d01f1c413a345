-- memagent schema v5: what recall searches besides chunks, as the local index
-- holds it: one row per vault note and per (live) profile fact, written in the
-- same transaction as the note or resource it comes from. Searched per user
-- by exact scans (a user's notes and facts are few); no HNSW graph here.
CREATE TABLE search_docs (
    user_id text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    doc_id text NOT NULL,
    kind text NOT NULL,
    path text NOT NULL,
    content text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    type text,
    created double precision NOT NULL DEFAULT 0,
    created_at text,
    conversation_id text,
    session_id text,
    scope_user_id text,
    agent_id text,
    deleted boolean NOT NULL DEFAULT false,
    expires date,
    source jsonb,
    tsv tsvector NOT NULL,
    embedding vector(384),
    PRIMARY KEY (user_id, doc_id)
);
CREATE INDEX search_docs_path ON search_docs (user_id, kind, path);
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
ALTER TABLE search_docs ENABLE ROW LEVEL SECURITY;
ALTER TABLE search_docs FORCE ROW LEVEL SECURITY;
CREATE POLICY by_user ON search_docs
    USING (user_id = current_setting('memagent.user_id', true))
    WITH CHECK (user_id = current_setting('memagent.user_id', true));
