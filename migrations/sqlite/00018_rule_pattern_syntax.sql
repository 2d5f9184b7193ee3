-- The syntax a rule's event pattern is written in (issue 26): '' for CloudEvents (every rule before), 'aws' for the
-- rules of the Amazon EventBridge API, whose patterns are kept as written and rewritten for the matcher.

-- +goose Up
ALTER TABLE rules ADD COLUMN pattern_syntax VARCHAR(16) NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE rules DROP COLUMN pattern_syntax;
