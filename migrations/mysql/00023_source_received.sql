-- How many webhook requests the control plane stored on a source's bus directly (issue 21: a webhook request is
-- stored once, on the bus, no longer on the source's intake first); each replica adds what it stored about once a
-- second. Shown with the counters of the source's connector.

-- +goose Up
ALTER TABLE sources ADD COLUMN received BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE sources DROP COLUMN received;
