// Package stream is the physical model on NATS JetStream that the control plane and the worker runtime share: the
// names of streams, subjects, consumers and KV buckets, the CloudEvents encoding of messages (the NATS protocol
// binding, binary mode) and of dead letters, message ids, and the configurations of bus and dead-letter streams.
// Only this package knows these names; everything else asks it. It sits below adapter/ and worker/ and imports
// neither.
package stream

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Names builds every physical name of one installation (one cluster id).
type Names struct {
	Cluster string
}

// BusStream is the stream of a bus: <cluster>_BUS_<busId>.
func (n Names) BusStream(busID string) string { return n.Cluster + "_BUS_" + busID }

// BusSubjects are the subject families of a bus's stream: what is put on it, what is routed to each rule, dead
// letters redriven to one target, and what each webhook source received before its source connector moves it to
// the bus.
func (n Names) BusSubjects(busID string) []string {
	p := n.Cluster + ".bus." + busID
	return []string{n.BusIn(busID), p + ".rule.*", p + ".redrive.*.*", p + ".source.*"}
}

// BusIn is the subject of the events put on a bus: <cluster>.bus.<busId>.in.
func (n Names) BusIn(busID string) string { return n.Cluster + ".bus." + busID + ".in" }

// RuleSubject is the subject of the events routed to a rule: <cluster>.bus.<busId>.rule.<ruleId>.
func (n Names) RuleSubject(busID, ruleID string) string {
	return n.Cluster + ".bus." + busID + ".rule." + ruleID
}

// RedriveSubject is the subject of the dead letters redriven to one target of a rule (read by that target's
// connector only, besides the rule's subject): <cluster>.bus.<busId>.redrive.<ruleId>.<targetId>.
func (n Names) RedriveSubject(busID, ruleID, targetID string) string {
	return n.Cluster + ".bus." + busID + ".redrive." + ruleID + "." + targetID
}

// SourceSubject is the intake of a source that the control plane receives (a webhook): the requests stored there,
// already CloudEvents, wait for the source's connector to put them on the bus: <cluster>.bus.<busId>.source.<sourceId>.
func (n Names) SourceSubject(busID, sourceID string) string {
	return n.Cluster + ".bus." + busID + ".source." + sourceID
}

// RouterConsumer is the durable consumer of a bus's router: <cluster>_<busId>_router.
func (n Names) RouterConsumer(busID string) string { return n.Cluster + "_" + busID + "_router" }

// TargetConsumer is the durable consumer of one rule's target: <cluster>_<ruleId>_<targetId>.
func (n Names) TargetConsumer(ruleID, targetID string) string {
	return n.Cluster + "_" + ruleID + "_" + targetID
}

// Bucket is a KV bucket of the installation: <cluster>_<purpose>.
func (n Names) Bucket(purpose string) string { return n.Cluster + "_" + purpose }

// PutMsgID is the Nats-Msg-Id of an event put on a bus: hex SHA-256 of len(source)|source|id, so a retried
// PutEvents is stored once inside the duplicate window.
func PutMsgID(source, id string) string {
	var buf [256]byte // on the stack: the hashed text of most events fits
	b := strconv.AppendInt(buf[:0], int64(len(source)), 10)
	b = append(append(append(append(b, '|'), source...), '|'), id...)
	return hexSum(b)
}

// hexSum is the SHA-256 of b in lower-case hex, built in one allocation.
func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

// BatchMsgID is the Nats-Msg-Id of a record batch: it hashes the ids its events would have alone (EntryMsgID) in
// order, so the same events stored again in the same order (a retried call, a router's copies of a record
// retried) are stored once inside the duplicate window, and never collide with an event stored alone.
func BatchMsgID(ids []string) string { return HopMsgID("batch", ids...) }

// HopMsgID is the Nats-Msg-Id of a later hop of a message (routing to a rule, dead-lettering, forwarding): it
// hashes the previous id with the hop, so a hop retried after a crash is stored once, and two legitimate copies
// (two rules, two attempts) never collide.
func HopMsgID(prevID string, hop ...string) string {
	var buf [256]byte
	n := len(prevID)
	for _, s := range hop {
		n += 1 + len(s)
	}
	if n <= len(buf) {
		b := append(buf[:0], prevID...)
		for _, s := range hop {
			b = append(append(b, '|'), s...)
		}
		return hexSum(b)
	}
	// A longer text (a batch's ids: 64 bytes each) is hashed in pieces of the buffer's size, not gathered first.
	h := sha256.New()
	b := buf[:0]
	write := func(s string) {
		for len(s) > 0 {
			if len(b) == cap(b) {
				h.Write(b)
				b = b[:0]
			}
			k := copy(b[len(b):cap(b)], s)
			b, s = b[:len(b)+k], s[k:]
		}
	}
	write(prevID)
	for _, s := range hop {
		write("|")
		write(s)
	}
	h.Write(b)
	var sum [sha256.Size]byte
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], h.Sum(sum[:0]))
	return string(out[:])
}

// LoggersSubject carries the log levels set with scope=cluster to every worker (core NATS): <cluster>.admin.loggers.
func (n Names) LoggersSubject() string { return n.Cluster + ".admin.loggers" }

// DLQStream is the dead-letter stream of an account: <cluster>_DLQ_<accountId>.
func (n Names) DLQStream(accountID string) string { return n.Cluster + "_DLQ_" + accountID }

// DLQSubject is the subject of an account's dead letters: <cluster>.dlq.<accountId>.
func (n Names) DLQSubject(accountID string) string { return n.Cluster + ".dlq." + accountID }

// DLQMsgID is the Nats-Msg-Id of the dead letter of a record (prevID: its Nats-Msg-Id, or another id stable
// across redeliveries) given up by connector: dead-lettering retried after a crash is stored once.
func DLQMsgID(prevID, connector string) string { return HopMsgID(prevID, "dlq", connector) }
