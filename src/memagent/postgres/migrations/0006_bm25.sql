-- memagent schema v6: keyword search ranks by BM25, as the local index (SQLite
-- FTS5) does; ts_rank_cd has no inverse document frequency, so rare words
-- counted no more than common ones. BM25 needs each row's length in tokens
-- (`dl`: the positions in its tsvector), kept by a trigger.
CREATE FUNCTION memagent_tsv_len(t tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::integer
          FROM unnest(t) u $$;

CREATE FUNCTION memagent_set_dl() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.dl := memagent_tsv_len(NEW.tsv);
    RETURN NEW;
END $$;

ALTER TABLE chunks ADD COLUMN dl integer NOT NULL DEFAULT 0;
ALTER TABLE search_docs ADD COLUMN dl integer NOT NULL DEFAULT 0;
UPDATE chunks SET dl = memagent_tsv_len(tsv);
UPDATE search_docs SET dl = memagent_tsv_len(tsv);
CREATE TRIGGER chunks_dl BEFORE INSERT OR UPDATE OF tsv ON chunks
    FOR EACH ROW EXECUTE FUNCTION memagent_set_dl();
CREATE TRIGGER search_docs_dl BEFORE INSERT OR UPDATE OF tsv ON search_docs
    FOR EACH ROW EXECUTE FUNCTION memagent_set_dl();
