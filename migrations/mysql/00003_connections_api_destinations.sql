-- Connections and API destinations of accounts, and the API destination a target delivers to.
-- A connection's authorization and invocation parameters are JSON in auth_parameters, every secret in it
-- encrypted (enc:v1:...). An API destination references its connection by id; the foreign key refuses deleting a
-- connection in use. targets.api_destination holds the name of the API destination of an api-destination target
-- (NULL for other types); it is added at the end of the table, where SQLite adds it too.

-- +goose Up
CREATE TABLE connections (
    id                 CHAR(16)     NOT NULL,
    account_id         VARCHAR(32)  NOT NULL,
    name               VARCHAR(64)  NOT NULL,
    description        VARCHAR(512) NOT NULL DEFAULT '',
    authorization_type VARCHAR(32)  NOT NULL,
    auth_parameters    MEDIUMTEXT   NOT NULL,
    created_at         DATETIME(6)  NOT NULL,
    updated_at         DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_connections_account_name (account_id, name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE api_destinations (
    id                               CHAR(16)      NOT NULL,
    account_id                       VARCHAR(32)   NOT NULL,
    name                             VARCHAR(64)   NOT NULL,
    description                      VARCHAR(512)  NOT NULL DEFAULT '',
    connection_id                    CHAR(16)      NOT NULL,
    invocation_endpoint              VARCHAR(2048) NOT NULL,
    http_method                      VARCHAR(16)   NOT NULL,
    invocation_rate_limit_per_second INT           NOT NULL,
    created_at                       DATETIME(6)   NOT NULL,
    updated_at                       DATETIME(6)   NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_api_destinations_account_name (account_id, name),
    KEY idx_api_destinations_connection (connection_id),
    CONSTRAINT fk_api_destinations_connection FOREIGN KEY (connection_id) REFERENCES connections (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

ALTER TABLE targets ADD COLUMN api_destination VARCHAR(64) NULL;
CREATE INDEX idx_targets_api_destination ON targets (account_id, api_destination);

-- +goose Down
DROP INDEX idx_targets_api_destination ON targets;
ALTER TABLE targets DROP COLUMN api_destination;
DROP TABLE api_destinations;
DROP TABLE connections;
