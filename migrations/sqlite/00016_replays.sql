-- Replays (issue 25): the events an archive holds from a window of time, put on its bus again by a source
-- connector of the runtime. The row is the declaration and the last progress the runtime reported.

-- +goose Up
CREATE TABLE replays (
    id                 CHAR(16)     NOT NULL PRIMARY KEY,
    account_id         VARCHAR(32)  NOT NULL,
    name               VARCHAR(64)  NOT NULL,
    description        VARCHAR(512) NOT NULL DEFAULT '',
    archive_id         CHAR(16)     NOT NULL,
    archive_name       VARCHAR(64)  NOT NULL,
    bus_id             CHAR(16)     NOT NULL,
    event_start_time   DATETIME  NOT NULL,
    event_end_time     DATETIME  NOT NULL,
    destination        TEXT         NOT NULL,
    rate               INT          NOT NULL,
    end_sequence       BIGINT       NOT NULL,
    state              VARCHAR(16)  NOT NULL,
    state_reason       VARCHAR(1024) NOT NULL DEFAULT '',
    replayed           BIGINT       NOT NULL DEFAULT 0,
    duplicates         BIGINT       NOT NULL DEFAULT 0,
    last_replayed_time DATETIME  NULL,
    started_at         DATETIME  NOT NULL,
    ended_at           DATETIME  NULL,
    updated_at         DATETIME  NOT NULL,
    CONSTRAINT uq_replays_account_name UNIQUE (account_id, name)
);
CREATE INDEX ix_replays_state ON replays (state);
CREATE INDEX ix_replays_bus ON replays (bus_id);

-- +goose Down
DROP TABLE replays;
