-- Sessions: the same tables and columns as migrations/mysql.

-- +goose Up
CREATE TABLE sessions (
    id           CHAR(16)     NOT NULL PRIMARY KEY,
    user_id      CHAR(16)     NOT NULL REFERENCES users (id),
    username     VARCHAR(64)  NOT NULL,
    secret_hash  CHAR(64)     NOT NULL,
    created_at   DATETIME     NOT NULL,
    last_seen_at DATETIME     NOT NULL,
    expires_at   DATETIME     NOT NULL,
    client_addr  VARCHAR(64)  NOT NULL,
    user_agent   VARCHAR(255) NOT NULL
);
CREATE INDEX idx_sessions_user ON sessions (user_id);
CREATE INDEX idx_sessions_expires ON sessions (expires_at);

CREATE TABLE login_failures (
    user_key        CHAR(64)    NOT NULL,
    client_addr     VARCHAR(64) NOT NULL,
    failures        INT         NOT NULL,
    last_failure_at DATETIME    NOT NULL,
    PRIMARY KEY (user_key, client_addr)
);
CREATE INDEX idx_login_failures_last ON login_failures (last_failure_at);

-- +goose Down
DROP TABLE login_failures;
DROP TABLE sessions;
