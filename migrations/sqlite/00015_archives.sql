-- Archives (issue 25): the events of a bus that match an optional pattern, kept for retention_days (0: indefinitely)
-- in a stream of their own. Names are unique per account, as in Amazon EventBridge.

-- +goose Up
CREATE TABLE archives (
    id             CHAR(16)     NOT NULL PRIMARY KEY,
    account_id     VARCHAR(32)  NOT NULL,
    bus_id         CHAR(16)     NOT NULL,
    name           VARCHAR(64)  NOT NULL,
    description    VARCHAR(512) NOT NULL DEFAULT '',
    event_pattern  TEXT         NULL,
    retention_days INT          NOT NULL DEFAULT 0,
    created_at     DATETIME     NOT NULL,
    updated_at     DATETIME     NOT NULL,
    CONSTRAINT uq_archives_account_name UNIQUE (account_id, name),
    CONSTRAINT fk_archives_bus FOREIGN KEY (bus_id) REFERENCES buses (id)
);
CREATE INDEX ix_archives_bus ON archives (bus_id);

-- +goose Down
DROP TABLE archives;
