package jetstream

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// IsRevisionConflict reports whether err is a KV compare-and-set that found another revision: an Update or Delete
// at a stale revision, or a Create over a live key. The server answers 10071 on R1 streams and 10164 on
// replicated ones; nats.go maps some of these to ErrKeyExists or ErrKeyRevisionMismatch and returns others as
// they are.
func IsRevisionConflict(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}
