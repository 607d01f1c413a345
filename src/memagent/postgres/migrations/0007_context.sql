-- memagent schema v7: a conversation turn's context, as the local index keeps
-- it (see memagent.postgres.context). `context` holds the text of the turns
-- beside it, whose lexemes join `tsv` at weight C (BM25 counts them at
-- `context_weight`); `search_vec` is the vector dense search compares: the
-- turn's own embedding mixed with its neighbours' (or its own). The turns
-- already stored are filled after this script, in the same transaction, by
-- `memagent.postgres.context.fill`.
CREATE FUNCTION memagent_chunk_tsv(content text, tags text[], context text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT setweight(to_tsvector('english', content), 'A')
          || setweight(to_tsvector('english', array_to_string(tags, ' ')), 'B')
          || setweight(to_tsvector('english', context), 'C') $$;

ALTER TABLE chunks ADD COLUMN context text NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN search_vec vector(384);
UPDATE chunks SET search_vec = embedding WHERE embedding IS NOT NULL;
DROP INDEX IF EXISTS chunks_embedding;
CREATE INDEX chunks_search_vec ON chunks USING hnsw (search_vec vector_cosine_ops);
