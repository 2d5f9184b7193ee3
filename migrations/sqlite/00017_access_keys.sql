-- Access keys (issue 26): AWS-style credentials of the Amazon EventBridge API, per account and role. The secret is
-- sealed under the master key (verifying a Signature Version 4 needs it), never hashed.

-- +goose Up
CREATE TABLE access_keys (
    id            CHAR(20)     NOT NULL PRIMARY KEY,
    account_id    VARCHAR(32)  NOT NULL REFERENCES accounts (id),
    name          VARCHAR(64)  NOT NULL,
    role          VARCHAR(16)  NOT NULL,
    sealed_secret TEXT         NOT NULL,
    created_by    VARCHAR(255) NOT NULL,
    created_at    DATETIME     NOT NULL,
    expires_at    DATETIME     NULL,
    last_used_at  DATETIME     NULL,
    revoked_at    DATETIME     NULL
);
CREATE INDEX idx_access_keys_account_name ON access_keys (account_id, name);

-- +goose Down
DROP TABLE access_keys;
