package awsevent_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/awsevent"
)

// TestPatternForAWS: an archive's pattern written in AWS's syntax, kept rewritten over the CloudEvents stored,
// reads back in AWS's names, compact, with its keys in order and its values byte for byte; a pattern written over
// the CloudEvents reads back in AWS's names.
func TestPatternForAWS(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ written, want string }{
		"renamed keys": {`{"source": ["shop"], "detail-type": ["OrderPlaced"], "detail": {"total": [{"numeric": [">", 100]}]}}`,
			`{"source":["shop"],"detail-type":["OrderPlaced"],"detail":{"total":[{"numeric":[">",100]}]}}`},
		"dotted keys": {`{"detail.state": ["a<b"], "account": ["1"]}`, `{"detail.state":["a<b"],"account":["1"]}`},
		"keys below detail are data": {`{"detail": {"detail-type": ["x"], "type": ["y"], "data": [1]}}`,
			`{"detail":{"detail-type":["x"],"type":["y"],"data":[1]}}`},
		"top-level $or": {`{"$or": [{"detail-type": ["a"]}, {"detail": {"x": [1]}, "source": ["s"]}]}`,
			`{"$or":[{"detail-type":["a"]},{"detail":{"x":[1]},"source":["s"]}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			kept, err := awsevent.RewritePattern([]byte(tc.written))
			require.NoError(t, err)
			got, err := awsevent.PatternForAWS(kept)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			again, err := awsevent.RewritePattern(got)
			require.NoError(t, err)
			assert.Equal(t, string(kept), string(again), "the pattern answered is the pattern kept")
		})
	}
	got, err := awsevent.PatternForAWS([]byte(`{"type":["a"],"data":{"x":[1]},"subject":["s"]}`))
	require.NoError(t, err)
	assert.Equal(t, `{"detail-type":["a"],"detail":{"x":[1]},"subject":["s"]}`, string(got), "written over the CloudEvents")
	_, err = awsevent.PatternForAWS([]byte(`[1]`))
	assert.Error(t, err)
}
