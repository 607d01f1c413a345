-- memagent schema v1: chunks (+ full-text and vector search), links, profile
-- resources with one row per item key (the dedupe constraint), the ops log.
-- Every row carries the owning `user_id`; row-level security keeps a
-- connection that set `memagent.user_id` to that user's rows.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE chunks (
    user_id text NOT NULL,
    id text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    data jsonb NOT NULL,
    content text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    type text,
    created double precision NOT NULL DEFAULT 0,
    created_at text,
    conversation_id text,
    session_id text,
    scope_user_id text,
    agent_id text,
    speaker text,
    deleted boolean NOT NULL DEFAULT false,
    access_count integer NOT NULL DEFAULT 0,
    accessed double precision,
    source jsonb,
    tsv tsvector NOT NULL,
    embedding vector(384),
    PRIMARY KEY (user_id, id)
);
CREATE INDEX chunks_created ON chunks (user_id, created DESC, seq DESC);
CREATE INDEX chunks_conv ON chunks (user_id, conversation_id, created, seq);
CREATE INDEX chunks_tags ON chunks USING gin (tags);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_embedding ON chunks USING hnsw (embedding vector_cosine_ops);

CREATE TABLE chunk_links (
    user_id text NOT NULL,
    src text NOT NULL,
    dst text NOT NULL,
    type text NOT NULL,
    PRIMARY KEY (user_id, src, dst, type)
);
CREATE INDEX chunk_links_dst ON chunk_links (user_id, dst);

CREATE TABLE profile_resources (
    user_id text NOT NULL,
    name text NOT NULL,
    body text NOT NULL,
    version integer NOT NULL,
    PRIMARY KEY (user_id, name)
);

CREATE TABLE profile_items (
    user_id text NOT NULL,
    name text NOT NULL,
    path text NOT NULL,
    item_key text NOT NULL,
    PRIMARY KEY (user_id, name, path, item_key),
    FOREIGN KEY (user_id, name) REFERENCES profile_resources ON DELETE CASCADE
);

CREATE TABLE ops (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id text NOT NULL,
    ts text NOT NULL,
    actor text NOT NULL,
    op text NOT NULL,
    path text NOT NULL,
    before text,
    after text,
    meta jsonb
);
CREATE INDEX ops_user ON ops (user_id, id);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['chunks', 'chunk_links', 'profile_resources', 'profile_items', 'ops']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY by_user ON %I USING (user_id = current_setting(''memagent.user_id'', true)) '
            'WITH CHECK (user_id = current_setting(''memagent.user_id'', true))', t);
    END LOOP;
END $$;
