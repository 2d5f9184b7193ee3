-- Event types seen on each bus: (source, type) pairs with first and last seen times, a count and the JSON Schema
-- inferred from their data. Written in batches by the control plane's recorder; removed with their bus.

-- +goose Up
CREATE TABLE event_types (
    bus_id     CHAR(16)      NOT NULL,
    source     VARCHAR(255)  NOT NULL,
    type       VARCHAR(255)  NOT NULL,
    first_seen DATETIME(6)   NOT NULL,
    last_seen  DATETIME(6)   NOT NULL,
    count      BIGINT        NOT NULL,
    data_schema MEDIUMTEXT   NOT NULL,
    PRIMARY KEY (bus_id, source, type),
    CONSTRAINT fk_event_types_bus FOREIGN KEY (bus_id) REFERENCES buses (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE event_types;
