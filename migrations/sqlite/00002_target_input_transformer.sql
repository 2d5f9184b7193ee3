-- A target's input transformer: the JSON form of domain/transform.Spec, NULL when the target delivers events as
-- they are. The same column as in migrations/mysql, at the end of the table.

-- +goose Up
ALTER TABLE targets ADD COLUMN input_transformer TEXT NULL;

-- +goose Down
ALTER TABLE targets DROP COLUMN input_transformer;
