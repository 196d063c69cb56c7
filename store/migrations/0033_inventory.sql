-- Inventory, plans and install windows on the operations surface (docs/operations.md): a
-- building and a plan version are edited under a version (If-Match), and an install window an
-- operator removes is kept for the bookings already made in it, marked deleted: no new slot is
-- offered in it.
ALTER TABLE buildings ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE plan_versions ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE install_windows ADD COLUMN deleted_at {{timestamp}};
CREATE INDEX buildings_street ON buildings (street, id);
CREATE INDEX plans_name ON plans (provider_id, name, id);
