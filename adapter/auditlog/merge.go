// Package auditlog merges the worker REST API's audit records, which the workers publish to the audit stream, into
// the control plane's audit log (domain/audit).
package auditlog

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/stream"
)

// Merger moves the records of the audit stream into the audit log. Several control-plane replicas may run one:
// they share one durable consumer, so each record is merged by one of them; a record is acknowledged only once
// stored (appending is idempotent by id, so a redelivery stores it once).
type Merger struct {
	JS       jetstream.JetStream
	Names    stream.Names
	Replicas int
	Entries  audit.Repository
	Logger   *slog.Logger
	// Batch is how many records are fetched at once (100 when zero).
	Batch int
}

// Run merges until ctx ends. It retries what fails (NATS or the database unreachable) after a pause, logged.
func (m *Merger) Run(ctx context.Context) {
	log := m.log()
	for ctx.Err() == nil {
		err := m.merge(ctx)
		if ctx.Err() != nil {
			return
		}
		log.Warn("merging the workers' audit records; retrying", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

func (m *Merger) log() *slog.Logger {
	if m.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Logger
}

// merge ensures the stream and merges batches until ctx ends or something fails.
func (m *Merger) merge(ctx context.Context) error {
	if err := m.Names.EnsureAuditStream(ctx, m.JS, m.Replicas); err != nil {
		return err
	}
	return stream.DrainWorkQueue(ctx, m.JS, m.Names.AuditStream(), m.Names.AuditConsumer(), m.Batch,
		func(ctx context.Context, msgs []jetstream.Msg) error {
			var got []jetstream.Msg
			var entries []audit.Entry
			for _, msg := range msgs {
				rec, err := stream.DecodeAuditRecord(msg.Data())
				if err != nil {
					m.log().Warn("dropping a malformed record of the audit stream", "subject", msg.Subject(), "err", err)
					_ = msg.Term()
					continue
				}
				got = append(got, msg)
				entries = append(entries, EntryOf(rec))
			}
			if len(entries) == 0 {
				return nil
			}
			if err := m.Entries.Append(ctx, entries); err != nil {
				return err // not acknowledged: redelivered after AckWait
			}
			for _, msg := range got {
				_ = msg.Ack()
			}
			return nil
		})
}

// EntryOf is the audit entry of a worker's record: by the cluster token (or anonymous when the call carried none),
// in the account its connector belongs to (connectors are named eb.<account>....).
func EntryOf(rec stream.AuditRecord) audit.Entry {
	e := audit.Entry{ID: rec.ID, Time: rec.Time, Source: audit.SourceWorkerPrefix + rec.Worker, ActorKind: audit.ActorAnonymous,
		Operation: "worker." + rec.Operation, Resource: rec.Resource, Status: rec.Status, ClientAddr: rec.ClientAddr}
	if rec.Authenticated {
		e.ActorKind = audit.ActorClusterToken
	}
	if parts := strings.Split(rec.Connector, "."); len(parts) >= 3 && parts[0] == "eb" && domain.ValidateAccountID(parts[1]) == nil {
		e.AccountID = parts[1]
	}
	e.Normalize()
	return e
}
