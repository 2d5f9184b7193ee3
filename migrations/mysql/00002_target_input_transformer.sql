-- A target's input transformer: the JSON form of domain/transform.Spec, NULL when the target delivers events as
-- they are. Added at the end of the table, where SQLite adds it too, so both dialects keep the same column order.
-- The column takes the table's utf8mb4_bin collation.

-- +goose Up
ALTER TABLE targets ADD COLUMN input_transformer MEDIUMTEXT NULL;

-- +goose Down
ALTER TABLE targets DROP COLUMN input_transformer;
