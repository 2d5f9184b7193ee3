-- A bus's log (issue 23): what it records (OFF, ERROR, INFO, TRACE) and whether records carry the event (NONE, FULL).

-- +goose Up
ALTER TABLE buses ADD COLUMN log_level VARCHAR(8) NOT NULL DEFAULT 'OFF';
ALTER TABLE buses ADD COLUMN log_include_detail VARCHAR(8) NOT NULL DEFAULT 'NONE';

-- +goose Down
ALTER TABLE buses DROP COLUMN log_include_detail;
ALTER TABLE buses DROP COLUMN log_level;
