-- Sources of buses: the same table and columns as in migrations/mysql.

-- +goose Up
CREATE TABLE sources (
    id          CHAR(16)     NOT NULL PRIMARY KEY,
    account_id  VARCHAR(32)  NOT NULL,
    bus_id      CHAR(16)     NOT NULL,
    name        VARCHAR(64)  NOT NULL,
    type        VARCHAR(48)  NOT NULL,
    description VARCHAR(512) NOT NULL DEFAULT '',
    state       VARCHAR(16)  NOT NULL,
    config      TEXT         NOT NULL,
    secret_keys TEXT         NOT NULL,
    token       VARCHAR(64)  NULL,
    created_at  DATETIME     NOT NULL,
    updated_at  DATETIME     NOT NULL,
    CONSTRAINT uq_sources_bus_name UNIQUE (bus_id, name),
    CONSTRAINT uq_sources_token UNIQUE (token),
    CONSTRAINT fk_sources_bus FOREIGN KEY (bus_id) REFERENCES buses (id)
);

-- +goose Down
DROP TABLE sources;
