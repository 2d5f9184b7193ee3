-- Connection states (issue 27): when a connection last became AUTHORIZED (NULL: at its creation), and when it became
-- DEAUTHORIZED (NULL while it is AUTHORIZED; DeauthorizeConnection drops its secrets).

-- +goose Up
ALTER TABLE connections ADD COLUMN authorized_at DATETIME NULL;
ALTER TABLE connections ADD COLUMN deauthorized_at DATETIME NULL;

-- +goose Down
ALTER TABLE connections DROP COLUMN deauthorized_at;
ALTER TABLE connections DROP COLUMN authorized_at;
