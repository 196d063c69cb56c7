-- Login throttling replaces the 15-minute lockout (auth, docs/security.md): a run of failed
-- password attempts is kept per login e-mail, whether or not the e-mail has a login (so the
-- throttle tells nobody which do), and after the first failures each further attempt waits a
-- delay that doubles with each failure. No row: no failure since the last success.
-- login is the kind ("subscriber", "operator") and the SHA-256 of the normalised e-mail;
-- throttled_until is when the next attempt is taken, never before the last failure.
CREATE TABLE login_throttles (
    login           TEXT PRIMARY KEY,
    failures        INTEGER NOT NULL,
    throttled_until {{timestamp}} NOT NULL
);
CREATE INDEX login_throttles_until ON login_throttles (throttled_until);
ALTER TABLE accounts DROP COLUMN failed_logins;
ALTER TABLE accounts DROP COLUMN locked_until;
-- Every subscriber access token carries the generation of its login it was issued under; a
-- password change or reset moves it on, which ends every token issued before, on every process.
ALTER TABLE accounts ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0;
