-- memagent schema v2: API keys in the database, so every server process on it
-- knows every key, and a revocation is seen by all of them on the next request.
-- Keys are looked up before the user is known (that is what a key tells), so
-- this table is server-wide: no per-user row-level security.
CREATE TABLE api_keys (
    id text PRIMARY KEY,
    user_id text,
    admin boolean NOT NULL DEFAULT false,
    label text,
    hash text NOT NULL,
    created text NOT NULL,
    last_used timestamptz,
    revoked text
);
CREATE INDEX api_keys_user ON api_keys (user_id);
