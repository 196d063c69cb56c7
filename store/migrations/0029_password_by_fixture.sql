-- Who set a login's password: TRUE when a fixture load set it (and its owner has not changed it
-- since), FALSE when its owner did (reset link, activation link, password change). Loading a
-- fixture never changes a password, and `subprov seed --update` changes only one a fixture set.
-- Logins from before this column are counted as their owners' own: nothing overwrites them.
ALTER TABLE accounts ADD COLUMN password_by_fixture {{bool}} NOT NULL DEFAULT FALSE;
