-- Versions of the schemas of event types: the same tables and columns as migrations/mysql.

-- +goose Up
ALTER TABLE event_types ADD COLUMN schema_version INT NOT NULL DEFAULT 1;
ALTER TABLE event_types ADD COLUMN schema_since DATETIME NULL;
CREATE TABLE event_type_schemas (
    bus_id      CHAR(16)     NOT NULL,
    source      VARCHAR(255) NOT NULL,
    type        VARCHAR(255) NOT NULL,
    version     INT          NOT NULL,
    data_schema MEDIUMTEXT   NOT NULL,
    first_seen  DATETIME     NOT NULL,
    last_seen   DATETIME     NOT NULL,
    PRIMARY KEY (bus_id, source, type, version),
    CONSTRAINT fk_event_type_schemas_bus FOREIGN KEY (bus_id) REFERENCES buses (id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE event_type_schemas;
ALTER TABLE event_types DROP COLUMN schema_since;
ALTER TABLE event_types DROP COLUMN schema_version;
