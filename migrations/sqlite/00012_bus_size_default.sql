-- Buses no longer reserve 1 GiB each by default: a bus without a retention.maxBytes of its own (0) keeps what its
-- account's storage quota allows, and nothing is reserved up front. A bus that had the old default gets the new one.

-- +goose Up
UPDATE buses SET retention_max_bytes = 0 WHERE retention_max_bytes = 1073741824;

-- +goose Down
UPDATE buses SET retention_max_bytes = 1073741824 WHERE retention_max_bytes = 0;
