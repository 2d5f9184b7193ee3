package tag_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/domain/tag"
)

// TestValidate: AWS's rules of tags.
func TestValidate(t *testing.T) {
	t.Parallel()
	assert.NoError(t, tag.Validate([]tag.Tag{{Key: "team", Value: ""}, {Key: strings.Repeat("k", 128), Value: strings.Repeat("v", 256)}, {Key: "ü", Value: "ö"}}))
	for name, tags := range map[string][]tag.Tag{
		"empty key":       {{Key: "", Value: "v"}},
		"long key":        {{Key: strings.Repeat("k", 129)}},
		"long value":      {{Key: "k", Value: strings.Repeat("v", 257)}},
		"reserved":        {{Key: "AWS:cloudformation:stack", Value: "v"}},
		"a key twice":     {{Key: "k"}, {Key: "k"}},
		"more than fifty": make([]tag.Tag, 51),
	} {
		assert.Error(t, tag.Validate(tags), name)
	}
}
