-- memagent schema v3: vault notes in the database. A note is a path and its
-- bytes, with a version (1 on create, +1 on each write) and timestamps; folders
-- are rows of their own (made by create_dir, or as the parents of a note), so
-- a folder outlives its last note as it does on files.
CREATE TABLE notes (
    user_id text NOT NULL,
    path text NOT NULL,
    content bytea NOT NULL,
    version integer NOT NULL DEFAULT 1,
    created timestamptz NOT NULL DEFAULT now(),
    updated timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, path)
);

CREATE TABLE note_dirs (
    user_id text NOT NULL,
    path text NOT NULL,
    PRIMARY KEY (user_id, path)
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['notes', 'note_dirs']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY by_user ON %I USING (user_id = current_setting(''memagent.user_id'', true)) '
            'WITH CHECK (user_id = current_setting(''memagent.user_id'', true))', t);
    END LOOP;
END $$;
