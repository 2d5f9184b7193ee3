-- The audit log: the same table and columns as migrations/mysql.

-- +goose Up
CREATE TABLE audit_entries (
    id          VARCHAR(32)  NOT NULL PRIMARY KEY,
    at          DATETIME     NOT NULL,
    source      VARCHAR(64)  NOT NULL,
    account_id  VARCHAR(32)  NOT NULL,
    actor_kind  VARCHAR(16)  NOT NULL,
    actor_id    VARCHAR(128) NOT NULL,
    actor_name  VARCHAR(128) NOT NULL,
    operation   VARCHAR(64)  NOT NULL,
    resource    VARCHAR(512) NOT NULL,
    outcome     VARCHAR(16)  NOT NULL,
    status      INT          NOT NULL,
    error_code  VARCHAR(64)  NOT NULL,
    client_addr VARCHAR(64)  NOT NULL
);
CREATE INDEX idx_audit_entries_at ON audit_entries (at, id);
CREATE INDEX idx_audit_entries_account_at ON audit_entries (account_id, at, id);

-- +goose Down
DROP TABLE audit_entries;
