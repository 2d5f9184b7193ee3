-- Identity: users, their memberships in accounts, and API keys. Accounts are no longer created on first use: the
-- accounts that rows of earlier versions name become accounts here, and "default" exists. A user's password is an
-- encoded argon2id hash; an API key's secret is stored only as its SHA-256 (hex), its buses as a JSON array ('' for
-- every bus). NULL times are "never".

-- +goose Up
CREATE TABLE users (
    id             CHAR(16)     NOT NULL,
    username       VARCHAR(64)  NOT NULL,
    password_hash  VARCHAR(255) NOT NULL,
    disabled       BOOLEAN      NOT NULL DEFAULT FALSE,
    instance_admin BOOLEAN      NOT NULL DEFAULT FALSE,
    created_at     DATETIME(6)  NOT NULL,
    updated_at     DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_users_username (username)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE memberships (
    account_id VARCHAR(32) NOT NULL,
    user_id    CHAR(16)    NOT NULL,
    role       VARCHAR(16) NOT NULL,
    created_at DATETIME(6) NOT NULL,
    PRIMARY KEY (account_id, user_id),
    KEY idx_memberships_user (user_id),
    CONSTRAINT fk_memberships_account FOREIGN KEY (account_id) REFERENCES accounts (id),
    CONSTRAINT fk_memberships_user FOREIGN KEY (user_id) REFERENCES users (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE api_keys (
    id             CHAR(16)     NOT NULL,
    account_id     VARCHAR(32)  NOT NULL,
    name           VARCHAR(64)  NOT NULL,
    role           VARCHAR(16)  NOT NULL,
    instance_admin BOOLEAN      NOT NULL DEFAULT FALSE,
    buses          TEXT         NOT NULL,
    secret_hash    CHAR(64)     NOT NULL,
    created_by     VARCHAR(255) NOT NULL,
    created_at     DATETIME(6)  NOT NULL,
    expires_at     DATETIME(6)  NULL,
    last_used_at   DATETIME(6)  NULL,
    revoked_at     DATETIME(6)  NULL,
    PRIMARY KEY (id),
    KEY idx_api_keys_account_name (account_id, name),
    CONSTRAINT fk_api_keys_account FOREIGN KEY (account_id) REFERENCES accounts (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT IGNORE INTO accounts (id, created_at)
    SELECT DISTINCT account_id, UTC_TIMESTAMP(6) FROM buses
    UNION SELECT DISTINCT account_id, UTC_TIMESTAMP(6) FROM connections
    UNION SELECT DISTINCT account_id, UTC_TIMESTAMP(6) FROM api_destinations
    UNION SELECT DISTINCT account_id, UTC_TIMESTAMP(6) FROM connector_states
    UNION SELECT 'default', UTC_TIMESTAMP(6);

-- +goose Down
DROP TABLE api_keys;
DROP TABLE memberships;
DROP TABLE users;
