-- Console sessions and the counts of failed sign-ins. A session's secret is stored only as its SHA-256 (hex); a
-- session row goes with its user. A failure count is keyed by the SHA-256 of the tried user name (which need not be
-- a user's) and the client's address.

-- +goose Up
CREATE TABLE sessions (
    id           CHAR(16)     NOT NULL,
    user_id      CHAR(16)     NOT NULL,
    username     VARCHAR(64)  NOT NULL,
    secret_hash  CHAR(64)     NOT NULL,
    created_at   DATETIME(6)  NOT NULL,
    last_seen_at DATETIME(6)  NOT NULL,
    expires_at   DATETIME(6)  NOT NULL,
    client_addr  VARCHAR(64)  NOT NULL,
    user_agent   VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    KEY idx_sessions_user (user_id),
    KEY idx_sessions_expires (expires_at),
    CONSTRAINT fk_sessions_user FOREIGN KEY (user_id) REFERENCES users (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE login_failures (
    user_key        CHAR(64)    NOT NULL,
    client_addr     VARCHAR(64) NOT NULL,
    failures        INT         NOT NULL,
    last_failure_at DATETIME(6) NOT NULL,
    PRIMARY KEY (user_key, client_addr),
    KEY idx_login_failures_last (last_failure_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE login_failures;
DROP TABLE sessions;
