-- Sources of buses: a type naming a source plugin of the worker (http → http-source), the plugin's flat config as
-- a JSON object of strings with the values of secret keys sealed (enc:v1:...), the names of the secret keys as a
-- JSON array, and for webhook (http) sources the token that their URL carries (NULL for other types; unique).

-- +goose Up
CREATE TABLE sources (
    id          CHAR(16)     NOT NULL,
    account_id  VARCHAR(32)  NOT NULL,
    bus_id      CHAR(16)     NOT NULL,
    name        VARCHAR(64)  NOT NULL,
    type        VARCHAR(48)  NOT NULL,
    description VARCHAR(512) NOT NULL DEFAULT '',
    state       VARCHAR(16)  NOT NULL,
    config      MEDIUMTEXT   NOT NULL,
    secret_keys TEXT         NOT NULL,
    token       VARCHAR(64)  NULL,
    created_at  DATETIME(6)  NOT NULL,
    updated_at  DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_sources_bus_name (bus_id, name),
    UNIQUE KEY uq_sources_token (token),
    CONSTRAINT fk_sources_bus FOREIGN KEY (bus_id) REFERENCES buses (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE sources;
