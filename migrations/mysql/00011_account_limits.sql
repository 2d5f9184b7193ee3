-- The limits an instance administrator sets for one account; 0 is the installation's default.

-- +goose Up
ALTER TABLE accounts ADD COLUMN put_events_per_second INT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE accounts DROP COLUMN put_events_per_second;
