-- Desired connector states and leases: the same tables and columns as migrations/mysql.

-- +goose Up
CREATE TABLE connector_states (
    connector  VARCHAR(255) NOT NULL,
    account_id VARCHAR(32)  NOT NULL,
    state      VARCHAR(16)  NOT NULL,
    updated_at DATETIME     NOT NULL,
    PRIMARY KEY (connector)
);

CREATE TABLE leases (
    name       VARCHAR(64)  NOT NULL,
    holder     VARCHAR(255) NOT NULL,
    expires_at DATETIME     NOT NULL,
    PRIMARY KEY (name)
);

-- +goose Down
DROP TABLE leases;
DROP TABLE connector_states;
