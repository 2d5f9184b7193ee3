-- Connections and API destinations of accounts, and the API destination a target delivers to: the same tables
-- and columns as in migrations/mysql.

-- +goose Up
CREATE TABLE connections (
    id                 CHAR(16)     NOT NULL PRIMARY KEY,
    account_id         VARCHAR(32)  NOT NULL,
    name               VARCHAR(64)  NOT NULL,
    description        VARCHAR(512) NOT NULL DEFAULT '',
    authorization_type VARCHAR(32)  NOT NULL,
    auth_parameters    TEXT         NOT NULL,
    created_at         DATETIME     NOT NULL,
    updated_at         DATETIME     NOT NULL,
    CONSTRAINT uq_connections_account_name UNIQUE (account_id, name)
);

CREATE TABLE api_destinations (
    id                               CHAR(16)      NOT NULL PRIMARY KEY,
    account_id                       VARCHAR(32)   NOT NULL,
    name                             VARCHAR(64)   NOT NULL,
    description                      VARCHAR(512)  NOT NULL DEFAULT '',
    connection_id                    CHAR(16)      NOT NULL,
    invocation_endpoint              VARCHAR(2048) NOT NULL,
    http_method                      VARCHAR(16)   NOT NULL,
    invocation_rate_limit_per_second INT           NOT NULL,
    created_at                       DATETIME      NOT NULL,
    updated_at                       DATETIME      NOT NULL,
    CONSTRAINT uq_api_destinations_account_name UNIQUE (account_id, name),
    CONSTRAINT fk_api_destinations_connection FOREIGN KEY (connection_id) REFERENCES connections (id)
);

CREATE INDEX idx_api_destinations_connection ON api_destinations (connection_id);

ALTER TABLE targets ADD COLUMN api_destination VARCHAR(64) NULL;
CREATE INDEX idx_targets_api_destination ON targets (account_id, api_destination);

-- +goose Down
DROP INDEX idx_targets_api_destination;
ALTER TABLE targets DROP COLUMN api_destination;
DROP INDEX idx_api_destinations_connection;
DROP TABLE api_destinations;
DROP TABLE connections;
