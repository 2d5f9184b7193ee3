-- Access keys (issue 26): AWS-style credentials of the Amazon EventBridge API, per account and role. The secret is
-- sealed under the master key (verifying a Signature Version 4 needs it), never hashed.

-- +goose Up
CREATE TABLE access_keys (
    id            CHAR(20)     NOT NULL,
    account_id    VARCHAR(32)  NOT NULL,
    name          VARCHAR(64)  NOT NULL,
    role          VARCHAR(16)  NOT NULL,
    sealed_secret TEXT         NOT NULL,
    created_by    VARCHAR(255) NOT NULL,
    created_at    DATETIME(6)  NOT NULL,
    expires_at    DATETIME(6)  NULL,
    last_used_at  DATETIME(6)  NULL,
    revoked_at    DATETIME(6)  NULL,
    PRIMARY KEY (id),
    KEY idx_access_keys_account_name (account_id, name),
    CONSTRAINT fk_access_keys_account FOREIGN KEY (account_id) REFERENCES accounts (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE access_keys;
