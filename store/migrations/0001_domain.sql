-- The whole domain model of subprov. Type tokens in {{braces}} are replaced per engine by
-- Dialect.DDL; everything else is portable SQL. Ids are UUID strings (fixture ids kept as
-- given); money is integer minor units; dates are YYYY-MM-DD text; instants are UTC.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE operators (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at    {{timestamp}} NOT NULL
);

CREATE TABLE providers (
    id                           TEXT PRIMARY KEY,
    name                         TEXT NOT NULL,
    time_zone                    TEXT NOT NULL,
    currency                     TEXT NOT NULL,
    tax_rate_bp                  INTEGER NOT NULL DEFAULT 0,
    sandbox                      {{bool}} NOT NULL DEFAULT FALSE,
    webhook_secret               TEXT NOT NULL,
    webhook_secret_hash          TEXT NOT NULL UNIQUE,
    webhook_url                  TEXT NOT NULL DEFAULT '',
    checkout_url                 TEXT NOT NULL DEFAULT '',
    service_provider_document_id TEXT NOT NULL DEFAULT '',
    sms_configured               {{bool}} NOT NULL DEFAULT FALSE,
    booking_window_days          INTEGER NOT NULL DEFAULT 21,
    support_group                TEXT NOT NULL DEFAULT 'Support',
    brand_color                  TEXT NOT NULL DEFAULT '',
    device_secret_hash           TEXT NOT NULL DEFAULT '',
    customer_seq                 INTEGER NOT NULL DEFAULT 0,
    document_seq                 INTEGER NOT NULL DEFAULT 0,
    created_at                   {{timestamp}} NOT NULL
);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers(id),
    prefix      TEXT NOT NULL,
    key_hash    TEXT NOT NULL UNIQUE,
    features    TEXT NOT NULL DEFAULT '',
    created_at  {{timestamp}} NOT NULL,
    revoked_at  {{timestamp}}
);
CREATE INDEX api_keys_provider ON api_keys (provider_id);

CREATE TABLE buildings (
    id                    TEXT PRIMARY KEY,
    street                TEXT NOT NULL,
    city                  TEXT NOT NULL DEFAULT '',
    postal_code           TEXT NOT NULL DEFAULT '',
    province              TEXT NOT NULL DEFAULT '',
    country               TEXT NOT NULL DEFAULT 'CA',
    line_type             TEXT,
    orderable             {{bool}} NOT NULL DEFAULT TRUE,
    earliest_service_date TEXT,
    presale               {{bool}} NOT NULL DEFAULT FALSE,
    search_key            TEXT NOT NULL DEFAULT '',
    created_at            {{timestamp}} NOT NULL
);

-- Coverage: which providers sell in which building.
CREATE TABLE building_providers (
    building_id TEXT NOT NULL REFERENCES buildings(id),
    provider_id TEXT NOT NULL REFERENCES providers(id),
    PRIMARY KEY (provider_id, building_id)
);

CREATE TABLE units (
    id          TEXT PRIMARY KEY,
    building_id TEXT NOT NULL REFERENCES buildings(id),
    unit_number TEXT NOT NULL,
    postal_unit TEXT,
    created_at  {{timestamp}} NOT NULL,
    UNIQUE (building_id, unit_number)
);

CREATE TABLE ports (
    id                  TEXT PRIMARY KEY,
    building_id         TEXT NOT NULL REFERENCES buildings(id),
    unit_id             TEXT REFERENCES units(id),
    switch_name         TEXT NOT NULL,
    port_name           TEXT NOT NULL,
    location_hash       TEXT UNIQUE,
    location_identifier TEXT UNIQUE,
    created_at          {{timestamp}} NOT NULL,
    UNIQUE (switch_name, port_name)
);
CREATE INDEX ports_unit ON ports (unit_id);

CREATE TABLE plans (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers(id),
    name        TEXT NOT NULL,
    created_at  {{timestamp}} NOT NULL
);

CREATE TABLE plan_versions (
    id                  TEXT PRIMARY KEY,
    plan_id             TEXT NOT NULL REFERENCES plans(id),
    provider_id         TEXT NOT NULL REFERENCES providers(id),
    monthly_price_minor BIGINT NOT NULL,
    setup_fee_minor     BIGINT NOT NULL DEFAULT 0,
    download_mbps       INTEGER NOT NULL,
    upload_mbps         INTEGER NOT NULL,
    store_product_id    TEXT NOT NULL DEFAULT '',
    sellable            {{bool}} NOT NULL DEFAULT TRUE,
    promo_price_minor   BIGINT,
    promo_ends_on       TEXT,
    created_at          {{timestamp}} NOT NULL
);
CREATE INDEX plan_versions_provider ON plan_versions (provider_id);

-- The built-in payment processor (the fixture's processor_customers). A real processor keeps
-- these on its side; the fake keeps them here so dev, demo, sandbox and tests behave alike.
CREATE TABLE processor_customers (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers(id),
    default_payment_method_id TEXT,
    created_at  {{timestamp}} NOT NULL
);

CREATE TABLE processor_payment_methods (
    id          TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES processor_customers(id),
    behaviour   TEXT NOT NULL,
    brand       TEXT NOT NULL DEFAULT 'visa',
    last4       TEXT NOT NULL DEFAULT '4242',
    position    INTEGER NOT NULL DEFAULT 0,
    created_at  {{timestamp}} NOT NULL
);

CREATE TABLE processor_charges (
    id                TEXT PRIMARY KEY,
    provider_id       TEXT NOT NULL,
    customer_id       TEXT NOT NULL,
    payment_method_id TEXT NOT NULL,
    idempotency_key   TEXT NOT NULL UNIQUE,
    amount_minor      BIGINT NOT NULL,
    currency          TEXT NOT NULL,
    status            TEXT NOT NULL,
    created_at        {{timestamp}} NOT NULL
);

CREATE TABLE subscribers (
    id                     TEXT PRIMARY KEY,
    provider_id            TEXT NOT NULL REFERENCES providers(id),
    email                  TEXT NOT NULL,
    customer_number        TEXT,
    legacy_customer_number TEXT,
    processor_customer_id  TEXT,
    payment_method_id      TEXT,
    search_text            TEXT NOT NULL DEFAULT '',
    phone_digits           TEXT NOT NULL DEFAULT '',
    created_at             {{timestamp}} NOT NULL,
    updated_at             {{timestamp}} NOT NULL,
    UNIQUE (provider_id, email),
    UNIQUE (provider_id, customer_number)
);
CREATE INDEX subscribers_legacy ON subscribers (provider_id, legacy_customer_number);
CREATE INDEX subscribers_phone ON subscribers (provider_id, phone_digits);

-- Contacts: the holder's contract contact (role holder) and a separate billing contact (role
-- invoice) when the holder or the provider split one off.
CREATE TABLE contacts (
    id            TEXT PRIMARY KEY,
    subscriber_id TEXT NOT NULL REFERENCES subscribers(id),
    role          TEXT NOT NULL,
    firstname     TEXT NOT NULL DEFAULT '',
    lastname      TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    phonenumber   TEXT NOT NULL DEFAULT '',
    company       TEXT NOT NULL DEFAULT '',
    street        TEXT NOT NULL DEFAULT '',
    city          TEXT NOT NULL DEFAULT '',
    postal_code   TEXT NOT NULL DEFAULT '',
    province      TEXT NOT NULL DEFAULT '',
    country       TEXT NOT NULL DEFAULT '',
    updated_at    {{timestamp}} NOT NULL,
    UNIQUE (subscriber_id, role)
);

CREATE TABLE authorized_users (
    id                 TEXT PRIMARY KEY,
    subscriber_id      TEXT NOT NULL REFERENCES subscribers(id),
    firstname          TEXT NOT NULL,
    lastname           TEXT NOT NULL,
    email              TEXT NOT NULL,
    phonenumber        TEXT NOT NULL DEFAULT '',
    invitation_sent_at {{timestamp}},
    created_at         {{timestamp}} NOT NULL
);
CREATE INDEX authorized_users_subscriber ON authorized_users (subscriber_id);

-- Portal logins. E-mail is the login, unique across the platform, stored lower-case.
CREATE TABLE accounts (
    id                 TEXT PRIMARY KEY,
    email              TEXT NOT NULL UNIQUE,
    provider_id        TEXT NOT NULL REFERENCES providers(id),
    subscriber_id      TEXT REFERENCES subscribers(id),
    authorized_user_id TEXT REFERENCES authorized_users(id),
    password_hash      TEXT,
    password_set_at    {{timestamp}},
    failed_logins      INTEGER NOT NULL DEFAULT 0,
    locked_until       {{timestamp}},
    created_at         {{timestamp}} NOT NULL
);
CREATE INDEX accounts_subscriber ON accounts (subscriber_id);

-- Single-use tokens mailed as links (password reset, set-up, activation, booking). Only a hash
-- of the token is stored.
CREATE TABLE tokens (
    token_hash  TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    provider_id TEXT,
    subject_id  TEXT NOT NULL,
    expires_at  {{timestamp}} NOT NULL,
    used_at     {{timestamp}},
    created_at  {{timestamp}} NOT NULL
);
CREATE INDEX tokens_subject ON tokens (subject_id, kind);

CREATE TABLE subscriptions (
    id                       TEXT PRIMARY KEY,
    provider_id              TEXT NOT NULL REFERENCES providers(id),
    subscriber_id            TEXT REFERENCES subscribers(id),
    plan_version_id          TEXT NOT NULL REFERENCES plan_versions(id),
    building_id              TEXT NOT NULL REFERENCES buildings(id),
    unit_id                  TEXT REFERENCES units(id),
    port_id                  TEXT REFERENCES ports(id),
    location_key             TEXT NOT NULL,
    status                   TEXT NOT NULL,
    workflow_state           TEXT NOT NULL DEFAULT '',
    delivery_mode            TEXT NOT NULL,
    mac_address              TEXT NOT NULL DEFAULT '',
    billing_owner            TEXT NOT NULL DEFAULT 'partner',
    billing_day              INTEGER NOT NULL DEFAULT 1,
    processor_customer_id    TEXT,
    payment_method_id        TEXT,
    external_subscription_id TEXT,
    anonymous                {{bool}} NOT NULL DEFAULT FALSE,
    contact_email            TEXT NOT NULL DEFAULT '',
    on_hold                  {{bool}} NOT NULL DEFAULT FALSE,
    appointment_at           {{timestamp}},
    booking_link_sent        {{bool}} NOT NULL DEFAULT FALSE,
    source                   TEXT NOT NULL,
    checkout_session_id      TEXT UNIQUE,
    started_at               TEXT,
    activated_at             {{timestamp}},
    canceled_at              {{timestamp}},
    ended_at                 {{timestamp}},
    cancel_reason            TEXT NOT NULL DEFAULT '',
    status_before_cancel     TEXT NOT NULL DEFAULT '',
    deprovisioned_at         {{timestamp}},
    requested_start_date     TEXT,
    created_at               {{timestamp}} NOT NULL,
    updated_at               {{timestamp}} NOT NULL
);
CREATE INDEX subscriptions_subscriber ON subscriptions (subscriber_id);
CREATE INDEX subscriptions_provider_status ON subscriptions (provider_id, status);
CREATE INDEX subscriptions_unit ON subscriptions (unit_id);
CREATE INDEX subscriptions_ended ON subscriptions (ended_at);
-- Idempotency per (subscriber e-mail, plan version, location): a live line is unique, so
-- concurrent duplicates lose at the constraint instead of in a read-then-write race.
CREATE UNIQUE INDEX subscriptions_live_line ON subscriptions (subscriber_id, plan_version_id, location_key)
    WHERE status <> 'CANCELLED' AND subscriber_id IS NOT NULL;
CREATE UNIQUE INDEX subscriptions_external_id ON subscriptions (provider_id, external_subscription_id)
    WHERE external_subscription_id IS NOT NULL;

CREATE TABLE plan_changes (
    id                   TEXT PRIMARY KEY,
    subscription_id      TEXT NOT NULL REFERENCES subscriptions(id),
    from_plan_version_id TEXT NOT NULL,
    to_plan_version_id   TEXT NOT NULL,
    changed_on           TEXT NOT NULL,
    actor                TEXT NOT NULL,
    created_at           {{timestamp}} NOT NULL,
    UNIQUE (subscription_id, changed_on)
);

CREATE TABLE install_jobs (
    id                TEXT PRIMARY KEY,
    provider_id       TEXT NOT NULL REFERENCES providers(id),
    subscription_id   TEXT NOT NULL REFERENCES subscriptions(id),
    kind              TEXT NOT NULL,
    booking           TEXT,
    state             TEXT NOT NULL,
    flags             TEXT NOT NULL DEFAULT '',
    assigned_to       TEXT NOT NULL DEFAULT '',
    appointment_at    {{timestamp}},
    invitation_due_on TEXT,
    created_at        {{timestamp}} NOT NULL,
    updated_at        {{timestamp}} NOT NULL
);
CREATE INDEX install_jobs_provider_state ON install_jobs (provider_id, state);
CREATE INDEX install_jobs_subscription ON install_jobs (subscription_id);

CREATE TABLE invoices (
    id              TEXT PRIMARY KEY,
    provider_id     TEXT NOT NULL REFERENCES providers(id),
    subscriber_id   TEXT REFERENCES subscribers(id),
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    number          TEXT NOT NULL,
    customer_number TEXT,
    invoice_date    TEXT NOT NULL,
    period          TEXT NOT NULL,
    kind            TEXT NOT NULL,
    status          TEXT NOT NULL,
    net_minor       BIGINT NOT NULL,
    tax_minor       BIGINT NOT NULL,
    total_minor     BIGINT NOT NULL,
    currency        TEXT NOT NULL,
    due_date        TEXT,
    paid_at         {{timestamp}},
    payment_intent  TEXT,
    created_at      {{timestamp}} NOT NULL,
    UNIQUE (subscription_id, period, kind),
    UNIQUE (provider_id, number)
);
CREATE INDEX invoices_subscriber ON invoices (subscriber_id, invoice_date);

CREATE TABLE invoice_lines (
    id               TEXT PRIMARY KEY,
    invoice_id       TEXT NOT NULL REFERENCES invoices(id),
    position         INTEGER NOT NULL,
    kind             TEXT NOT NULL,
    description      TEXT NOT NULL,
    unit_price_minor BIGINT NOT NULL,
    days             INTEGER,
    days_in_period   INTEGER,
    amount_minor     BIGINT NOT NULL
);
CREATE INDEX invoice_lines_invoice ON invoice_lines (invoice_id);

-- The provider's billing system, built in: the ledger of billing documents that the local
-- invoice rows point at. The dev fault billing_system=down makes it unreachable.
CREATE TABLE ledger_documents (
    id              TEXT PRIMARY KEY,
    provider_id     TEXT NOT NULL REFERENCES providers(id),
    subscriber_id   TEXT,
    kind            TEXT NOT NULL,
    invoice_id      TEXT,
    credit_note_id  TEXT,
    state           TEXT NOT NULL,
    amount_minor    BIGINT NOT NULL,
    created_at      {{timestamp}} NOT NULL
);
CREATE INDEX ledger_documents_subscriber ON ledger_documents (provider_id, subscriber_id);

CREATE TABLE credit_notes (
    id                    TEXT PRIMARY KEY,
    provider_id           TEXT NOT NULL REFERENCES providers(id),
    subscriber_id         TEXT REFERENCES subscribers(id),
    subscription_id       TEXT REFERENCES subscriptions(id),
    invoice_id            TEXT REFERENCES invoices(id),
    number                TEXT NOT NULL,
    state                 TEXT NOT NULL,
    reason                TEXT NOT NULL,
    amount_minor          BIGINT NOT NULL,
    currency              TEXT NOT NULL,
    applied_to_invoice_id TEXT,
    created_at            {{timestamp}} NOT NULL,
    state_changed_at      {{timestamp}} NOT NULL
);
CREATE INDEX credit_notes_subscriber ON credit_notes (subscriber_id, created_at);

CREATE TABLE charges (
    id                TEXT PRIMARY KEY,
    provider_id       TEXT NOT NULL REFERENCES providers(id),
    invoice_id        TEXT NOT NULL REFERENCES invoices(id),
    idempotency_key   TEXT NOT NULL UNIQUE,
    amount_minor      BIGINT NOT NULL,
    status            TEXT NOT NULL,
    processor_ref     TEXT,
    failure_code      TEXT,
    created_at        {{timestamp}} NOT NULL
);
CREATE INDEX charges_invoice ON charges (invoice_id);

CREATE TABLE tickets (
    id            TEXT PRIMARY KEY,
    provider_id   TEXT NOT NULL REFERENCES providers(id),
    number        TEXT NOT NULL,
    subscriber_id TEXT REFERENCES subscribers(id),
    contact_email TEXT NOT NULL DEFAULT '',
    kind          TEXT NOT NULL,
    subject       TEXT NOT NULL,
    priority      TEXT NOT NULL,
    status        TEXT NOT NULL,
    group_name    TEXT NOT NULL,
    article       TEXT NOT NULL DEFAULT '',
    internal_note TEXT NOT NULL DEFAULT '',
    created_at    {{timestamp}} NOT NULL,
    UNIQUE (provider_id, number)
);
CREATE INDEX tickets_email ON tickets (provider_id, contact_email);
CREATE INDEX tickets_subscriber ON tickets (subscriber_id);

CREATE TABLE notes (
    id            TEXT PRIMARY KEY,
    provider_id   TEXT NOT NULL REFERENCES providers(id),
    subscriber_id TEXT NOT NULL REFERENCES subscribers(id),
    author        TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_at    {{timestamp}} NOT NULL
);

CREATE TABLE audit_log (
    id          TEXT PRIMARY KEY,
    provider_id TEXT,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    subject_id  TEXT NOT NULL,
    details     TEXT NOT NULL DEFAULT '{}',
    created_at  {{timestamp}} NOT NULL
);
CREATE INDEX audit_log_subject ON audit_log (subject_id);

CREATE TABLE checkout_sessions (
    id                   TEXT PRIMARY KEY,
    provider_id          TEXT NOT NULL REFERENCES providers(id),
    plan_version_id      TEXT NOT NULL REFERENCES plan_versions(id),
    building_id          TEXT NOT NULL REFERENCES buildings(id),
    unit_id              TEXT REFERENCES units(id),
    location_hash        TEXT NOT NULL DEFAULT '',
    mac_address          TEXT NOT NULL DEFAULT '',
    delivery_mode        TEXT NOT NULL,
    status               TEXT NOT NULL,
    account_id           TEXT REFERENCES accounts(id),
    partner_reference_id TEXT NOT NULL DEFAULT '',
    subscription_id      TEXT,
    created_at           {{timestamp}} NOT NULL,
    redirected_at        {{timestamp}},
    expired_at           {{timestamp}},
    completed_at         {{timestamp}}
);
CREATE INDEX checkout_sessions_account ON checkout_sessions (account_id);

CREATE TABLE events (
    id              TEXT PRIMARY KEY,
    provider_id     TEXT NOT NULL REFERENCES providers(id),
    type            TEXT NOT NULL,
    subscription_id TEXT,
    payload         TEXT NOT NULL,
    sandbox         {{bool}} NOT NULL DEFAULT FALSE,
    delivery_state  TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at {{timestamp}},
    created_at      {{timestamp}} NOT NULL
);
CREATE INDEX events_provider_created ON events (provider_id, created_at);
CREATE INDEX events_due ON events (delivery_state, next_attempt_at);

CREATE TABLE webhook_attempts (
    id          TEXT PRIMARY KEY,
    event_id    TEXT NOT NULL REFERENCES events(id),
    url         TEXT NOT NULL,
    status_code INTEGER,
    latency_ms  INTEGER NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    attempted_at {{timestamp}} NOT NULL
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);

CREATE TABLE verification_codes (
    id            TEXT PRIMARY KEY,
    provider_id   TEXT NOT NULL REFERENCES providers(id),
    subscriber_id TEXT NOT NULL REFERENCES subscribers(id),
    channel       TEXT NOT NULL,
    code_hash     TEXT NOT NULL,
    checks        INTEGER NOT NULL DEFAULT 0,
    expires_at    {{timestamp}} NOT NULL,
    consumed_at   {{timestamp}},
    created_at    {{timestamp}} NOT NULL
);
CREATE INDEX verification_codes_subscriber ON verification_codes (provider_id, subscriber_id, created_at);

-- Mail the service sends, whichever transport carried it (the dev-mode outbox).
CREATE TABLE outbox (
    id         TEXT PRIMARY KEY,
    to_addr    TEXT NOT NULL,
    subject    TEXT NOT NULL,
    body       TEXT NOT NULL,
    links      TEXT NOT NULL DEFAULT '[]',
    status     TEXT NOT NULL,
    transport  TEXT NOT NULL DEFAULT '',
    attempts   INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    sent_at    {{timestamp}}
);
CREATE INDEX outbox_to ON outbox (to_addr, created_at);

CREATE TABLE idempotency_keys (
    provider_id  TEXT NOT NULL,
    key          TEXT NOT NULL,
    scope        TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status_code  INTEGER NOT NULL,
    response     TEXT NOT NULL,
    created_at   {{timestamp}} NOT NULL,
    PRIMARY KEY (provider_id, scope, key)
);

-- Port state kept by the sim switch driver, durable so a restart does not forget what is live.
CREATE TABLE sim_ports (
    switch_name   TEXT NOT NULL,
    port_name     TEXT NOT NULL,
    state         TEXT NOT NULL,
    vlan          INTEGER NOT NULL DEFAULT 0,
    download_mbps INTEGER NOT NULL DEFAULT 0,
    upload_mbps   INTEGER NOT NULL DEFAULT 0,
    mac_address   TEXT NOT NULL DEFAULT '',
    updated_at    {{timestamp}} NOT NULL,
    PRIMARY KEY (switch_name, port_name)
);
