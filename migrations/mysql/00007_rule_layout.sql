-- A rule's layout: what a client (the console's channel builder) stores about how the rule is drawn, a JSON
-- object the control plane keeps and answers as given. NULL when the rule has none.

-- +goose Up
ALTER TABLE rules ADD COLUMN layout MEDIUMTEXT NULL;

-- +goose Down
ALTER TABLE rules DROP COLUMN layout;
