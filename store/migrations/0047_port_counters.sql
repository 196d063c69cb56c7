-- Interface counters (docs/network.md, Counters and outages): a job samples the octet counters
-- and link state of every port that lines hold on a switch whose driver reads them (not the
-- sim). The last raw reading of each port is kept to take the next one's difference from;
-- counters are unsigned 64-bit on the switch and kept as their two's-complement BIGINT.
CREATE TABLE port_readings (
    port_id    TEXT PRIMARY KEY REFERENCES ports(id),
    sampled_at {{timestamp}} NOT NULL,
    in_octets  BIGINT NOT NULL,
    out_octets BIGINT NOT NULL,
    link_up    {{bool}} NOT NULL
);
-- The traffic series: bytes per port per UTC hour (hour is the hour's start). download_bytes
-- is what the switch sent out of the port to the subscriber (its TX, out-octets),
-- upload_bytes what it received from the subscriber (RX, in-octets).
CREATE TABLE port_traffic (
    port_id        TEXT NOT NULL REFERENCES ports(id),
    hour           {{timestamp}} NOT NULL,
    download_bytes BIGINT NOT NULL DEFAULT 0,
    upload_bytes   BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (port_id, hour)
);
-- Periods the port's link was down, as sampled: opened at the sample that found it down,
-- resolved at the sample that found it up again (NULL while ongoing). At most one open per port.
CREATE TABLE port_outages (
    id          TEXT PRIMARY KEY,
    port_id     TEXT NOT NULL REFERENCES ports(id),
    started_at  {{timestamp}} NOT NULL,
    resolved_at {{timestamp}}
);
CREATE INDEX port_outages_port ON port_outages (port_id, started_at);
CREATE UNIQUE INDEX port_outages_open ON port_outages (port_id) WHERE resolved_at IS NULL;
-- When the switch's last sampling was queued, so the sweep queues one per interval.
ALTER TABLE switches ADD COLUMN sampled_at {{timestamp}};
