-- Archives (issue 25): the events of a bus that match an optional pattern, kept for retention_days (0: indefinitely)
-- in a stream of their own. Names are unique per account, as in Amazon EventBridge.

-- +goose Up
CREATE TABLE archives (
    id             CHAR(16)     NOT NULL,
    account_id     VARCHAR(32)  NOT NULL,
    bus_id         CHAR(16)     NOT NULL,
    name           VARCHAR(64)  NOT NULL,
    description    VARCHAR(512) NOT NULL DEFAULT '',
    event_pattern  TEXT         NULL,
    retention_days INT          NOT NULL DEFAULT 0,
    created_at     DATETIME(6)  NOT NULL,
    updated_at     DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_archives_account_name (account_id, name),
    KEY ix_archives_bus (bus_id),
    CONSTRAINT fk_archives_bus FOREIGN KEY (bus_id) REFERENCES buses (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE archives;
