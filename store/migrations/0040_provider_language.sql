-- The language a provider's subscribers are written to when they have chosen none: "en" or
-- "fr" (Canadian French). Existing providers keep English.
ALTER TABLE providers ADD COLUMN default_language TEXT NOT NULL DEFAULT 'en';
