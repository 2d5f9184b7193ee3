-- Buses, rules and targets of accounts. Every table defaults to utf8mb4_bin, so names and ids compare and sort
-- case-sensitively, byte by byte, as on SQLite. JSON is kept in TEXT columns (no JSON type: MySQL 8 and
-- MariaDB 10.11 differ there). Times are UTC, DATETIME(6).

-- +goose Up
CREATE TABLE accounts (
    id         VARCHAR(32) NOT NULL,
    created_at DATETIME(6) NOT NULL,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE buses (
    id                        CHAR(16)     NOT NULL,
    account_id                VARCHAR(32)  NOT NULL,
    name                      VARCHAR(64)  NOT NULL,
    description               VARCHAR(512) NOT NULL DEFAULT '',
    retention_max_age_seconds BIGINT       NOT NULL,
    retention_max_bytes       BIGINT       NOT NULL,
    created_at                DATETIME(6)  NOT NULL,
    updated_at                DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_buses_account_name (account_id, name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The unique key (bus_id, name) is also the index on bus_id (its leading column).
CREATE TABLE rules (
    id            CHAR(16)     NOT NULL,
    account_id    VARCHAR(32)  NOT NULL,
    bus_id        CHAR(16)     NOT NULL,
    name          VARCHAR(64)  NOT NULL,
    description   VARCHAR(512) NOT NULL DEFAULT '',
    event_pattern TEXT         NOT NULL,
    state         VARCHAR(16)  NOT NULL,
    created_at    DATETIME(6)  NOT NULL,
    updated_at    DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_rules_bus_name (bus_id, name),
    CONSTRAINT fk_rules_bus FOREIGN KEY (bus_id) REFERENCES buses (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE targets (
    id                          CHAR(16)    NOT NULL,
    account_id                  VARCHAR(32) NOT NULL,
    bus_id                      CHAR(16)    NOT NULL,
    rule_id                     CHAR(16)    NOT NULL,
    name                        VARCHAR(64) NOT NULL,
    type                        VARCHAR(32) NOT NULL,
    config                      MEDIUMTEXT  NOT NULL,
    retry_max_attempts          INT         NOT NULL,
    retry_max_event_age_seconds INT         NOT NULL,
    created_at                  DATETIME(6) NOT NULL,
    updated_at                  DATETIME(6) NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_targets_rule_name (rule_id, name),
    KEY idx_targets_bus (bus_id),
    CONSTRAINT fk_targets_rule FOREIGN KEY (rule_id) REFERENCES rules (id),
    CONSTRAINT fk_targets_bus FOREIGN KEY (bus_id) REFERENCES buses (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE targets;
DROP TABLE rules;
DROP TABLE buses;
DROP TABLE accounts;
