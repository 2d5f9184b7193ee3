package delivery

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// AttemptsBucketPurpose names the KV bucket of failed attempts: Names.Bucket(AttemptsBucketPurpose).
const AttemptsBucketPurpose = "attempts"

// AttemptsMaxAge is the max age of the attempts bucket: longer than any record is retried (a retry policy's maximum
// event age is at most 24 hours), so a record whose target was deleted while it waited for a retry leaves nothing
// behind for long.
const AttemptsMaxAge = 48 * time.Hour

// Attempts records how many attempts to write a record failed, so that a record's attempt number (connector.Meta)
// counts attempts and not deliveries: JetStream's delivery count also grows when a record comes back after an ack
// wait that a starved worker let pass, after a handover (records received but not started are handed back) and
// after a crash. Only records that failed are written, once per failed attempt; a record written at its first
// attempt costs nothing.
type Attempts struct {
	kv jetstream.KeyValue
}

// OpenAttempts ensures the attempts bucket (file storage, history 1, max age AttemptsMaxAge).
func OpenAttempts(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) (*Attempts, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: bucket, Description: "failed attempts of the records waiting for a retry", History: 1,
		TTL: AttemptsMaxAge, Storage: jetstream.FileStorage, Replicas: max(replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("ensuring KV bucket %s: %w", bucket, err)
	}
	return &Attempts{kv: kv}, nil
}

// attemptKey is the key of a record of a consumer: <stream>.<durable>.<sequence>, each name hex-encoded (prefix
// "x") when it holds a character a KV key cannot.
func attemptKey(streamName, durable string, seq uint64) string {
	return keyPart(streamName) + "." + keyPart(durable) + "." + strconv.FormatUint(seq, 10)
}

func keyPart(s string) string {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '=':
		default:
			return "x" + hex.EncodeToString([]byte(s))
		}
	}
	if s == "" {
		return "x"
	}
	return s
}

// Progress is how far the events of a record batch are settled: every event before Index, and those of Settled
// (after Index, in order), whose writes ran at the same time as the others'.
type Progress struct {
	Index   int
	Settled []int
}

// settles reports whether the event at i is settled.
func (p Progress) settles(i int) bool {
	return i < p.Index || slices.Contains(p.Settled, i)
}

// Failed returns how many attempts of the record failed so far (0 when none was recorded), and for a record batch
// how far its events are settled.
func (a *Attempts) Failed(ctx context.Context, key string) (failed uint64, p Progress, err error) {
	e, err := a.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, Progress{}, nil
	}
	if err != nil {
		return 0, Progress{}, err
	}
	n, at, batched := strings.Cut(string(e.Value()), "@")
	failed, err = strconv.ParseUint(n, 10, 64)
	if err != nil || !batched {
		return failed, Progress{}, err
	}
	at, list, _ := strings.Cut(at, "+")
	p.Index, err = strconv.Atoi(at)
	if err != nil || p.Index < 0 {
		return 0, Progress{}, fmt.Errorf("attempts of %s: %q is not an index", key, at)
	}
	if list != "" {
		for _, v := range strings.Split(list, ",") {
			i, err := strconv.Atoi(v)
			if err != nil || i <= p.Index {
				return 0, Progress{}, fmt.Errorf("attempts of %s: %q is not an index after %d", key, v, p.Index)
			}
			p.Settled = append(p.Settled, i)
		}
	}
	return failed, p, nil
}

// Record stores that n attempts of the record failed; for a record batch, with how far its events are settled.
// The value is "n", or "n@index" past the first event, then "+i,j" for the events settled after it.
func (a *Attempts) Record(ctx context.Context, key string, n uint64, p Progress) error {
	v := strconv.FormatUint(n, 10)
	if p.Index > 0 || len(p.Settled) > 0 {
		v += "@" + strconv.Itoa(p.Index)
	}
	sep := "+"
	for _, i := range p.Settled {
		v += sep + strconv.Itoa(i)
		sep = ","
	}
	_, err := a.kv.Put(ctx, key, []byte(v))
	return err
}

// Forget deletes the record's count: it was written, dead-lettered or dropped.
func (a *Attempts) Forget(ctx context.Context, key string) error {
	return a.kv.Delete(ctx, key)
}
