package stream

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The audit stream carries the worker REST API's audit records to the control plane, which merges them into its
// audit log: a work queue, emptied as the control plane acknowledges what it stored, kept for AuditStreamMaxAge at
// most when no control plane takes them.

// AuditStreamMaxAge is how long a record waits for a control plane.
const AuditStreamMaxAge = 30 * 24 * time.Hour

// AuditStream is the stream of the workers' audit records: <cluster>_AUDIT.
func (n Names) AuditStream() string { return n.Cluster + "_AUDIT" }

// AuditSubject is the subject of one worker's records: <cluster>.audit.<workerId>.
func (n Names) AuditSubject(workerID string) string { return n.Cluster + ".audit." + workerID }

// AuditConsumer is the durable consumer through which the control-plane replicas merge the records, each record
// to one of them.
func (n Names) AuditConsumer() string { return n.Cluster + "_audit_merge" }

// AuditStreamConfig is the audit stream.
func (n Names) AuditStreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:       n.AuditStream(),
		Subjects:   []string{n.Cluster + ".audit.>"}, // worker ids may hold dots
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    jetstream.FileStorage,
		MaxAge:     AuditStreamMaxAge,
		Discard:    jetstream.DiscardOld,
		Duplicates: DuplicateWindow,
		Replicas:   replicas,
	}
}

// EnsureAuditStream creates the audit stream, or updates it. Idempotent.
func (n Names) EnsureAuditStream(ctx context.Context, js jetstream.JetStream, replicas int) error {
	if err := ensure(ctx, js, n.AuditStreamConfig(replicas)); err != nil {
		return fmt.Errorf("ensuring the audit stream: %w", err)
	}
	return nil
}

// AuditRecord is one call of a worker's REST API, as the worker publishes it. It holds no credential: no body,
// no query string, no header.
type AuditRecord struct {
	// ID is unique; it is the message's Nats-Msg-Id, and the audit entry's id.
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Worker string    `json:"worker"`
	// Operation is the route's name ("connectors.pause").
	Operation string `json:"operation"`
	// Resource is what the call named ("connectors/eb.shop.orders.router", "connector-plugins/http").
	Resource string `json:"resource"`
	// Connector is the connector the call named, if any.
	Connector string `json:"connector,omitempty"`
	// Authenticated is whether the call carried the cluster token.
	Authenticated bool   `json:"authenticated"`
	Status        int    `json:"status"`
	ClientAddr    string `json:"clientAddr,omitempty"`
}

var auditIDEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewAuditID returns a new record id: 16 lowercase base32 characters (80 random bits).
func NewAuditID() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return strings.ToLower(auditIDEncoding.EncodeToString(b[:]))
}

// PublishAudit stores rec in the audit stream and returns once JetStream has it.
func (n Names) PublishAudit(ctx context.Context, js jetstream.JetStream, rec AuditRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = js.Publish(ctx, n.AuditSubject(rec.Worker), data, jetstream.WithMsgID(rec.ID))
	return err
}

// DecodeAuditRecord reads a record of the audit stream.
func DecodeAuditRecord(data []byte) (AuditRecord, error) {
	var rec AuditRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return AuditRecord{}, fmt.Errorf("decoding an audit record: %w", err)
	}
	if rec.ID == "" || rec.Operation == "" {
		return AuditRecord{}, fmt.Errorf("decoding an audit record: no id or operation")
	}
	return rec, nil
}
