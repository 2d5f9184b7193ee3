-- What a target receives of an event (issue 26): 'cloudevents' (every target before) or 'aws', Amazon EventBridge's
-- envelope, the default of the targets made through the AWS API.

-- +goose Up
ALTER TABLE targets ADD COLUMN format VARCHAR(16) NOT NULL DEFAULT 'cloudevents';

-- +goose Down
ALTER TABLE targets DROP COLUMN format;
