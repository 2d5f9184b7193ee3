package awsevent_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
)

// conformanceDir is the shared corpus of Amazon EventBridge cases (LocalStack's event_pattern_templates, run against
// AWS's TestEventPattern), beside the repository's root; domain/pattern reads it too.
const conformanceDir = "../../../shared/conformance/event-patterns"

// minConverted guards against a corpus that went missing or a filter that lets nothing through.
const minConverted = 100

// TestConformanceThroughCloudEvents: every case of the corpus whose event is an envelope PutEvents can make (its
// top-level members AWS's, detail an object or none) and whose pattern names no version gives AWS's answer when the event
// is stored through FromEntry, the pattern rewritten, and the two matched as the router does (MatchView): x matches,
// x_NEG does not, x_EXC is refused.
func TestConformanceThroughCloudEvents(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(conformanceDir)
	require.NoError(t, err, "the corpus is expected at %s, beside the repository", conformanceDir)
	converted := 0
	for _, f := range entries {
		name, ok := strings.CutSuffix(f.Name(), ".json5")
		if !ok {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(conformanceDir, f.Name()))
		require.NoError(t, err)
		var doc struct {
			Event        map[string]json.RawMessage
			EventPattern json.RawMessage
		}
		require.NoError(t, json.Unmarshal(json5ToJSON(raw), &doc), name)
		entry, id, account, region, ok := entryOf(t, doc.Event)
		if !ok || bytes.Contains(doc.EventPattern, []byte(`"version"`)) {
			continue
		}
		ev, err := awsevent.FromEntry(entry, id, account, region, time.Unix(0, 0))
		if err != nil { // a source that is no URI-reference, say
			continue
		}
		converted++
		view, err := cloudevent.MatchView(ev)
		require.NoError(t, err)
		rewritten, err := awsevent.RewritePattern(doc.EventPattern)
		if strings.HasSuffix(name, "_EXC") {
			assert.Error(t, err, "%s: %s is refused by AWS", name, doc.EventPattern)
			continue
		}
		if !assert.NoError(t, err, "%s: %s", name, doc.EventPattern) {
			continue
		}
		p, err := pattern.Compile(rewritten)
		require.NoError(t, err)
		got, err := p.Match(view)
		require.NoError(t, err)
		assert.Equal(t, !strings.HasSuffix(name, "_NEG"), got, "%s: %s on %s", name, rewritten, view)
	}
	t.Logf("%d cases of the corpus went through CloudEvents", converted)
	assert.GreaterOrEqual(t, converted, minConverted)
}

// entryOf returns the PutEvents entry of an event of the corpus and its id, account and region; ok is false when
// the event is not one PutEvents makes.
func entryOf(t *testing.T, event map[string]json.RawMessage) (e awsevent.Entry, id, account, region string, ok bool) {
	t.Helper()
	str := func(key string, dst *string) bool {
		raw, has := event[key]
		return !has || json.Unmarshal(raw, dst) == nil
	}
	var at string
	for key := range event {
		switch key {
		case "version", "id", "detail-type", "source", "account", "time", "region", "resources", "detail":
		default:
			return e, "", "", "", false
		}
	}
	if !str("id", &id) || !str("account", &account) || !str("region", &region) || !str("source", &e.Source) ||
		!str("detail-type", &e.DetailType) || !str("time", &at) {
		return e, "", "", "", false
	}
	if raw, has := event["resources"]; has && json.Unmarshal(raw, &e.Resources) != nil {
		return e, "", "", "", false
	}
	detail := bytes.TrimSpace(event["detail"])
	if detail == nil {
		detail = []byte(`{}`) // no leaves either way: the same to a pattern
	}
	if !bytes.HasPrefix(detail, []byte("{")) || id == "" || e.Source == "" || e.DetailType == "" {
		return e, "", "", "", false
	}
	e.Detail = string(detail)
	if at != "" {
		tm, err := time.Parse(time.RFC3339, at)
		if err != nil || tm.Format(time.RFC3339Nano) != at {
			return e, "", "", "", false // a time the CloudEvent would write otherwise
		}
		e.Time = &tm
	}
	return e, id, account, region, true
}

// json5ToJSON turns the corpus's JSON5 (comments, trailing commas) into JSON, as domain/pattern's conformance test
// does.
func json5ToJSON(src []byte) []byte {
	var out []byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			out = append(out, src[i:min(j+1, len(src))]...)
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return append(out, src[i:]...)
			}
			i += end + 3
		case c == ']' || c == '}':
			k := len(out) - 1
			for k >= 0 && (out[k] == ' ' || out[k] == '\n' || out[k] == '\t' || out[k] == '\r') {
				k--
			}
			if k >= 0 && out[k] == ',' {
				out = append(out[:k], out[k+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}
