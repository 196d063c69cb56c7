-- Installations (issue 8): the provider's technician capacity, places taken per slot, the
-- single-use booking links mailed to customers, and the slot an install job holds.

-- An appointment window on one weekday, in the provider's time zone, and how many technicians
-- work it: a slot is one window on one date and has that many places.
CREATE TABLE install_windows (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers(id),
    weekday     INTEGER NOT NULL,
    starts_at   TEXT NOT NULL,
    ends_at     TEXT NOT NULL,
    technicians INTEGER NOT NULL,
    created_at  {{timestamp}} NOT NULL
);
CREATE INDEX install_windows_provider ON install_windows (provider_id, weekday);

-- Places taken in a slot. A booking takes a place with one conditional UPDATE
-- (booked < technicians) inside its transaction, so the last place goes to one customer only.
CREATE TABLE install_slots (
    window_id   TEXT NOT NULL REFERENCES install_windows(id),
    slot_date   TEXT NOT NULL,
    provider_id TEXT NOT NULL REFERENCES providers(id),
    booked      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (window_id, slot_date)
);
CREATE INDEX install_slots_provider ON install_slots (provider_id, slot_date);

-- Single-use booking links; only a hash of the token is kept. state: live, used, paused
-- (the line is on hold), replaced (a newer link was sent).
CREATE TABLE booking_links (
    token_hash     TEXT PRIMARY KEY,
    provider_id    TEXT NOT NULL REFERENCES providers(id),
    install_job_id TEXT NOT NULL REFERENCES install_jobs(id),
    state          TEXT NOT NULL,
    created_at     {{timestamp}} NOT NULL,
    used_at        {{timestamp}}
);
CREATE INDEX booking_links_job ON booking_links (install_job_id, state);

ALTER TABLE install_jobs ADD COLUMN slot_window_id TEXT;
ALTER TABLE install_jobs ADD COLUMN slot_date TEXT;
CREATE INDEX install_jobs_invitation_due ON install_jobs (state, invitation_due_on);
