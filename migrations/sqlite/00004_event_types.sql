-- Event types seen on each bus: the same table and columns as migrations/mysql.

-- +goose Up
CREATE TABLE event_types (
    bus_id      CHAR(16)     NOT NULL,
    source      VARCHAR(255) NOT NULL,
    type        VARCHAR(255) NOT NULL,
    first_seen  DATETIME     NOT NULL,
    last_seen   DATETIME     NOT NULL,
    count       BIGINT       NOT NULL,
    data_schema MEDIUMTEXT   NOT NULL,
    PRIMARY KEY (bus_id, source, type),
    CONSTRAINT fk_event_types_bus FOREIGN KEY (bus_id) REFERENCES buses (id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE event_types;
