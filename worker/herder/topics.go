package herder

import (
	"context"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TopicsBucketPurpose names the KV bucket of Kafka Connect's active topics (KIP-558): the subjects each sink
// connector read and each source connector wrote since it was created or its topics were reset. A key is
// <hex of the connector's name>.<subject>.
const TopicsBucketPurpose = "topics"

// topicsRemembered is how long a worker remembers that it recorded a connector's subject, so that it writes the
// bucket at most once a minute per subject, and a subject used after a reset is back within a minute.
const topicsRemembered = time.Minute

// kvKey is what a KV key may hold.
var kvKey = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)

func topicsPrefix(name string) string { return hex.EncodeToString([]byte(name)) + "." }

// topicUsed returns the function a connector's tasks call with each subject they read or write.
func (h *Herder) topicUsed(name string) func(subject string) {
	prefix := topicsPrefix(name)
	return func(subject string) {
		key := prefix + subject
		now := time.Now()
		if at, ok := h.used.Load(key); ok && now.Sub(at.(time.Time)) < topicsRemembered {
			return
		}
		if !kvKey.MatchString(key) {
			return // a subject a key cannot hold; never one of the installation's own
		}
		h.used.Store(key, now)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := h.topics.Put(ctx, key, nil); err != nil {
				h.used.Delete(key) // recorded again with the next record
				h.log.Warn("recording a connector's active topic", "connector", name, "subject", subject, "err", err)
			}
		}()
	}
}

// Topics returns the subjects a connector read (a sink) or wrote (a source) since it was created or its topics were
// reset, sorted (Kafka Connect's GET /connectors/{c}/topics). ErrNotFound when it does not exist.
func (h *Herder) Topics(ctx context.Context, name string) ([]string, error) {
	if _, err := h.get(name); err != nil {
		return nil, err
	}
	keys, err := h.topicKeys(ctx, name)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, k := range keys {
		out = append(out, strings.TrimPrefix(k, topicsPrefix(name)))
	}
	slices.Sort(out)
	return out, nil
}

// ResetTopics forgets the active topics of a connector; the subjects it uses from then on are recorded again,
// within a minute on every worker. ErrNotFound when it does not exist.
func (h *Herder) ResetTopics(ctx context.Context, name string) error {
	if _, err := h.get(name); err != nil {
		return err
	}
	return h.forgetTopics(ctx, name)
}

// forgetTopics deletes a connector's active topics (a reset, or the connector deleted).
func (h *Herder) forgetTopics(ctx context.Context, name string) error {
	keys, err := h.topicKeys(ctx, name)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := h.topics.Delete(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return err
		}
		h.used.Delete(k) // this worker records it again at once; the others within topicsRemembered
	}
	return nil
}

func (h *Herder) topicKeys(ctx context.Context, name string) ([]string, error) {
	lister, err := h.topics.ListKeysFiltered(ctx, topicsPrefix(name)+">")
	if err != nil {
		return nil, err
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	return keys, nil
}
