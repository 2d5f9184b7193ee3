-- Identity: the same tables and columns as migrations/mysql.

-- +goose Up
CREATE TABLE users (
    id             CHAR(16)     NOT NULL PRIMARY KEY,
    username       VARCHAR(64)  NOT NULL,
    password_hash  VARCHAR(255) NOT NULL,
    disabled       BOOLEAN      NOT NULL DEFAULT FALSE,
    instance_admin BOOLEAN      NOT NULL DEFAULT FALSE,
    created_at     DATETIME     NOT NULL,
    updated_at     DATETIME     NOT NULL,
    CONSTRAINT uq_users_username UNIQUE (username)
);

CREATE TABLE memberships (
    account_id VARCHAR(32) NOT NULL REFERENCES accounts (id),
    user_id    CHAR(16)    NOT NULL REFERENCES users (id),
    role       VARCHAR(16) NOT NULL,
    created_at DATETIME    NOT NULL,
    PRIMARY KEY (account_id, user_id)
);
CREATE INDEX idx_memberships_user ON memberships (user_id);

CREATE TABLE api_keys (
    id             CHAR(16)     NOT NULL PRIMARY KEY,
    account_id     VARCHAR(32)  NOT NULL REFERENCES accounts (id),
    name           VARCHAR(64)  NOT NULL,
    role           VARCHAR(16)  NOT NULL,
    instance_admin BOOLEAN      NOT NULL DEFAULT FALSE,
    buses          TEXT         NOT NULL,
    secret_hash    CHAR(64)     NOT NULL,
    created_by     VARCHAR(255) NOT NULL,
    created_at     DATETIME     NOT NULL,
    expires_at     DATETIME     NULL,
    last_used_at   DATETIME     NULL,
    revoked_at     DATETIME     NULL
);
CREATE INDEX idx_api_keys_account_name ON api_keys (account_id, name);

INSERT OR IGNORE INTO accounts (id, created_at)
    SELECT DISTINCT account_id, strftime('%Y-%m-%d %H:%M:%f', 'now') FROM buses
    UNION SELECT DISTINCT account_id, strftime('%Y-%m-%d %H:%M:%f', 'now') FROM connections
    UNION SELECT DISTINCT account_id, strftime('%Y-%m-%d %H:%M:%f', 'now') FROM api_destinations
    UNION SELECT DISTINCT account_id, strftime('%Y-%m-%d %H:%M:%f', 'now') FROM connector_states
    UNION SELECT 'default', strftime('%Y-%m-%d %H:%M:%f', 'now');

-- +goose Down
DROP TABLE api_keys;
DROP TABLE memberships;
DROP TABLE users;
