-- compatible-with: 41
-- Each migration from this one on records with itself the oldest subprov binary (named by the
-- latest migration it knows) that still works on the schema after it, as the header above
-- names it: an older binary reads what a newer schema requires without knowing the newer
-- migrations. The migrations before this one record none.
ALTER TABLE schema_migrations ADD COLUMN compatible_with INTEGER;
