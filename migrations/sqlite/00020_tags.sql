-- Tags of resources (issue 27): key-value pairs of an account's buses, rules, connections, API destinations and
-- archives, by the resource's internal id.

-- +goose Up
CREATE TABLE tags (
    account_id  VARCHAR(32)   NOT NULL REFERENCES accounts (id),
    resource_id CHAR(16)      NOT NULL,
    tag_key     VARCHAR(128)  NOT NULL,
    tag_value   VARCHAR(256)  NOT NULL,
    PRIMARY KEY (account_id, resource_id, tag_key)
);

-- +goose Down
DROP TABLE tags;
