-- Desired states an operator set on connectors (pause, stop), kept by the reconciler; and leases, so that one
-- control-plane replica at a time reconciles.

-- +goose Up
CREATE TABLE connector_states (
    connector  VARCHAR(255) NOT NULL,
    account_id VARCHAR(32)  NOT NULL,
    state      VARCHAR(16)  NOT NULL,
    updated_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (connector)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE leases (
    name       VARCHAR(64)  NOT NULL,
    holder     VARCHAR(255) NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE leases;
DROP TABLE connector_states;
