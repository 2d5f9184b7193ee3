-- Versions of the schemas of event types (issue 24): when the schema inferred from a type's data changes, the one
-- before is kept with its version and the first and last time it was seen; removed with their bus.

-- +goose Up
ALTER TABLE event_types ADD COLUMN schema_version INT NOT NULL DEFAULT 1;
ALTER TABLE event_types ADD COLUMN schema_since DATETIME(6) NULL;
CREATE TABLE event_type_schemas (
    bus_id      CHAR(16)     NOT NULL,
    source      VARCHAR(255) NOT NULL,
    type        VARCHAR(255) NOT NULL,
    version     INT          NOT NULL,
    data_schema MEDIUMTEXT   NOT NULL,
    first_seen  DATETIME(6)  NOT NULL,
    last_seen   DATETIME(6)  NOT NULL,
    PRIMARY KEY (bus_id, source, type, version),
    CONSTRAINT fk_event_type_schemas_bus FOREIGN KEY (bus_id) REFERENCES buses (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- +goose Down
DROP TABLE event_type_schemas;
ALTER TABLE event_types DROP COLUMN schema_since;
ALTER TABLE event_types DROP COLUMN schema_version;
