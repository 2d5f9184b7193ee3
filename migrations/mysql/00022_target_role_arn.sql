-- The role ARN a target is declared with (issue 27): kept and answered, for the clients of the AWS API that declare
-- one (Terraform's role_arn); it grants nothing, the roles of API keys and access keys do.

-- +goose Up
ALTER TABLE targets ADD COLUMN role_arn VARCHAR(1600) NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE targets DROP COLUMN role_arn;
