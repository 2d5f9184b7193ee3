-- The audit log: one row per control operation of the control plane's dialects and of the workers' REST API
-- (merged from their stream). account_id is '' for operations of no account; rows outlive their account, so there
-- is no foreign key. No row holds a credential: no body, query string or header is kept.

-- +goose Up
CREATE TABLE audit_entries (
    id          VARCHAR(32)  NOT NULL,
    at          DATETIME(6)  NOT NULL,
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
    client_addr VARCHAR(64)  NOT NULL,
    PRIMARY KEY (id),
    KEY idx_audit_entries_at (at, id),
    KEY idx_audit_entries_account_at (account_id, at, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE audit_entries;
