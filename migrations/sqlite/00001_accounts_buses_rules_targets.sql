-- Buses, rules and targets of accounts: the same tables and columns as migrations/mysql. SQLite compares text
-- byte by byte, so names are case-sensitive as with utf8mb4_bin. Times are UTC in DATETIME columns, which the
-- driver parses back into time.Time.

-- +goose Up
CREATE TABLE accounts (
    id         VARCHAR(32) NOT NULL PRIMARY KEY,
    created_at DATETIME    NOT NULL
);

CREATE TABLE buses (
    id                        CHAR(16)     NOT NULL PRIMARY KEY,
    account_id                VARCHAR(32)  NOT NULL,
    name                      VARCHAR(64)  NOT NULL,
    description               VARCHAR(512) NOT NULL DEFAULT '',
    retention_max_age_seconds BIGINT       NOT NULL,
    retention_max_bytes       BIGINT       NOT NULL,
    created_at                DATETIME     NOT NULL,
    updated_at                DATETIME     NOT NULL,
    CONSTRAINT uq_buses_account_name UNIQUE (account_id, name)
);

-- The unique constraint (bus_id, name) is also the index on bus_id (its leading column).
CREATE TABLE rules (
    id            CHAR(16)     NOT NULL PRIMARY KEY,
    account_id    VARCHAR(32)  NOT NULL,
    bus_id        CHAR(16)     NOT NULL,
    name          VARCHAR(64)  NOT NULL,
    description   VARCHAR(512) NOT NULL DEFAULT '',
    event_pattern TEXT         NOT NULL,
    state         VARCHAR(16)  NOT NULL,
    created_at    DATETIME     NOT NULL,
    updated_at    DATETIME     NOT NULL,
    CONSTRAINT uq_rules_bus_name UNIQUE (bus_id, name),
    CONSTRAINT fk_rules_bus FOREIGN KEY (bus_id) REFERENCES buses (id)
);

CREATE TABLE targets (
    id                          CHAR(16)    NOT NULL PRIMARY KEY,
    account_id                  VARCHAR(32) NOT NULL,
    bus_id                      CHAR(16)    NOT NULL,
    rule_id                     CHAR(16)    NOT NULL,
    name                        VARCHAR(64) NOT NULL,
    type                        VARCHAR(32) NOT NULL,
    config                      TEXT        NOT NULL,
    retry_max_attempts          INT         NOT NULL,
    retry_max_event_age_seconds INT         NOT NULL,
    created_at                  DATETIME    NOT NULL,
    updated_at                  DATETIME    NOT NULL,
    CONSTRAINT uq_targets_rule_name UNIQUE (rule_id, name),
    CONSTRAINT fk_targets_rule FOREIGN KEY (rule_id) REFERENCES rules (id),
    CONSTRAINT fk_targets_bus FOREIGN KEY (bus_id) REFERENCES buses (id)
);

CREATE INDEX idx_targets_bus ON targets (bus_id);

-- +goose Down
DROP TABLE targets;
DROP TABLE rules;
DROP TABLE buses;
DROP TABLE accounts;
