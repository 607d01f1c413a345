-- memagent schema v8: repairs what v6 and v7 left undone where they ran as a
-- role subject to row-level security (the tables' owner, neither superuser
-- nor BYPASSRLS: FORCE ROW LEVEL SECURITY hid every row from it, so their
-- UPDATEs changed nothing). Migrations now lift FORCE for their transaction
-- (memagent.postgres.db); this one redoes the fills: BM25 row lengths, the
-- searched vector of turns outside a conversation, and (after this script,
-- in the same transaction, unless v7 ran in the same upgrade) every
-- conversation turn's context, by `memagent.postgres.context.fill`.
UPDATE chunks SET dl = memagent_tsv_len(tsv) WHERE dl <> memagent_tsv_len(tsv);
UPDATE search_docs SET dl = memagent_tsv_len(tsv) WHERE dl <> memagent_tsv_len(tsv);
UPDATE chunks SET search_vec = embedding WHERE search_vec IS NULL AND embedding IS NOT NULL;
