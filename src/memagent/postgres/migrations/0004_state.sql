-- memagent schema v4: agent state that is not memory (conversations, traces)
-- as named documents per user, so a chat started on one server continues on
-- any other.
CREATE TABLE state (
    user_id text NOT NULL,
    name text NOT NULL,
    data bytea NOT NULL,
    updated timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, name)
);
ALTER TABLE state ENABLE ROW LEVEL SECURITY;
ALTER TABLE state FORCE ROW LEVEL SECURITY;
CREATE POLICY by_user ON state
    USING (user_id = current_setting('memagent.user_id', true))
    WITH CHECK (user_id = current_setting('memagent.user_id', true));
