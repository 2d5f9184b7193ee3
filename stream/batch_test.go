package stream

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// batchCases are events of every form the store keeps: typed extensions, each form of data, none.
func batchCases() []*event.Event {
	home, _ := url.Parse("https://example.com/x")
	ref, _ := url.Parse("../y?z=1")
	at := time.Date(2026, 12, 1, 10, 11, 12, 123456789, time.UTC)
	mods := []func(e *event.Event){
		nil,
		func(e *event.Event) {
			e.SetExtension("count", int32(-7))
			e.SetExtension("flag", false)
			e.SetExtension("blob", []byte{0, 1, 0xff})
			e.SetExtension("home", types.URI{URL: *home})
			e.SetExtension("ref", types.URIRef{URL: *ref})
			e.SetExtension("at", types.Timestamp{Time: at})
			e.SetExtension("text", "42")
			e.SetTime(at)
			e.SetSubject("o-42")
			e.SetDataSchema("https://example.com/schema")
		},
		func(e *event.Event) {
			e.SetDataContentType("application/json")
			e.DataEncoded = []byte(`{"n": 12345678901234567890, "s": "\u00e9"}`)
		},
		func(e *event.Event) { e.DataEncoded = []byte(`[1,2]`) }, // JSON data without a type
		func(e *event.Event) { e.SetDataContentType("text/plain"); e.DataEncoded = []byte(" Hello, World!\n") },
		func(e *event.Event) { e.DataEncoded = []byte{0, 1, 2, 0xff}; e.DataBase64 = true },
		func(e *event.Event) { e.SetDataContentType("text/plain"); e.DataEncoded = []byte{0xc0, 0xa0} },
		func(e *event.Event) { e.SetDataContentType("text/plain"); e.DataEncoded = []byte{} },
		func(e *event.Event) { e.DataEncoded = []byte("not json") },
		func(e *event.Event) { e.SetDataContentType("application/xml"); e.DataEncoded = []byte(`<a x="1"/>`) },
	}
	out := make([]*event.Event, len(mods))
	for i, mod := range mods {
		out[i] = newEvent(mod)
		out[i].SetID("e" + string(rune('a'+i)))
	}
	return out
}

// sameEvent fails unless got is want: the same JSON form, data bytes, binary mark and extension types.
func sameEvent(t *testing.T, want, got *event.Event) {
	t.Helper()
	wj, err := json.Marshal(want)
	require.NoError(t, err)
	gj, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Equal(t, string(wj), string(gj), "JSON form")
	assert.Equal(t, want.Data(), got.Data(), "data")
	assert.Equal(t, want.DataBase64, got.DataBase64, "binary mark")
	assert.Len(t, got.Extensions(), len(want.Extensions()))
	for k, v := range want.Extensions() {
		wantText, wantType, _ := extensionValue(v)
		gotText, gotType, _ := extensionValue(got.Extensions()[k])
		assert.Equal(t, wantType+" "+wantText, gotType+" "+gotText, "extension %s", k)
	}
}

// Every event of a record batch reads back as the single-event form (Encode, Decode) gives it back: a reader does
// not see which form stored it.
func TestBatchReadsAsSingleEvents(t *testing.T) {
	t.Parallel()
	events := batchCases()
	for _, e := range events {
		require.NoError(t, Check(e, 0))
	}
	m, err := EncodeBatch(events, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "10", m.Header.Get(HeaderBatch))
	assert.Empty(t, m.Header.Values(HeaderBatchTrace), "no traceparent given: none written")
	got, err := DecodeAll(&nats.Msg{Header: m.Header, Data: m.Data})
	require.NoError(t, err)
	require.Len(t, got, len(events))
	for i, e := range events {
		single := Encode(e)
		want, err := Decode(&nats.Msg{Header: single.Header, Data: single.Data})
		require.NoError(t, err)
		t.Run(e.ID(), func(t *testing.T) { sameEvent(t, want, got[i]) })
	}

	// The body is the CloudEvents JSON batch format: any reader of it sees the events.
	var raw []map[string]any
	require.NoError(t, json.Unmarshal(m.Data, &raw))
	require.Len(t, raw, len(events))
	assert.Equal(t, "eb", raw[1]["id"])
	assert.Equal(t, ContentTypeBatch, m.Header.Get("content-type"))
}

// A message of Encode reads as one event, its own headers its entry's.
func TestDecodeAllReadsASingleEvent(t *testing.T) {
	t.Parallel()
	m := Encode(newEvent(nil))
	m.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	got, err := DecodeAll(&nats.Msg{Header: m.Header, Data: m.Data})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "e1", got[0].ID())
	assert.Equal(t, []nats.Header{m.Header}, EntryHeaders(m.Header, 1))
}

// Each event of a batch has its own traceparent in its entry's headers; the batch's own headers are not there, the
// message's other headers are.
func TestEntryHeaderGivesEachEventItsTrace(t *testing.T) {
	t.Parallel()
	events := batchCases()[:3]
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	m, err := EncodeBatch(events, []string{tp, "", strings.Replace(tp, "b7ad", "c8be", 1)}, nil)
	require.NoError(t, err)
	m.Header.Set(HeaderReplay, "r1")
	hs := EntryHeaders(m.Header, 3)
	h0 := hs[0]
	assert.Equal(t, tp, h0.Get("traceparent"))
	assert.Equal(t, "r1", h0.Get(HeaderReplay))
	for _, k := range []string{HeaderBatch, HeaderBatchTrace, HeaderBatchTypes, "content-type"} {
		assert.Empty(t, h0.Values(k), k)
	}
	assert.Empty(t, hs[1].Get("traceparent"), "the second event has none")
	assert.Equal(t, "r1", hs[1].Get(HeaderReplay))
	assert.Contains(t, hs[2].Get("traceparent"), "c8be")

	plain, err := EncodeBatch(events, nil, nil)
	require.NoError(t, err)
	plain.Header.Set(HeaderReplay, "r1")
	hs = EntryHeaders(plain.Header, 3)
	assert.Equal(t, nats.Header{HeaderReplay: {"r1"}}, hs[0])
	assert.Equal(t, reflect.ValueOf(hs[0]).UnsafePointer(), reflect.ValueOf(hs[2]).UnsafePointer(),
		"events without a trace share their headers")

	_, err = EncodeBatch(events, []string{tp}, nil)
	assert.ErrorContains(t, err, "1 traceparents for 3 events")
	_, err = EncodeBatch(nil, nil, nil)
	assert.Error(t, err)
}

// A batch that does not agree with itself is an error naming what is wrong, never a part of its events.
func TestDecodeAllRefusesABrokenBatch(t *testing.T) {
	t.Parallel()
	good, err := EncodeBatch(batchCases()[:2], nil, nil)
	require.NoError(t, err)
	with := func(mod func(m *nats.Msg)) *nats.Msg {
		m := &nats.Msg{Header: nats.Header{}, Data: append([]byte(nil), good.Data...)}
		for k, v := range good.Header {
			m.Header[k] = append([]string(nil), v...)
		}
		mod(m)
		return m
	}
	for _, tc := range []struct {
		name string
		m    *nats.Msg
		want string
	}{
		{"count not a number", with(func(m *nats.Msg) { m.Header.Set(HeaderBatch, "two") }), "is not a number of events"},
		{"count too large", with(func(m *nats.Msg) { m.Header.Set(HeaderBatch, "3") }), "record batch of 3 events holds 2"},
		{"not JSON", with(func(m *nats.Msg) { m.Data = []byte("[{") }), "not valid JSON"},
		{"not an array", with(func(m *nats.Msg) { m.Data = []byte(`{"id":"x"}`) }), "a batch is a JSON array"},
		{"an event without an id", with(func(m *nats.Msg) {
			m.Data = []byte(`[{"specversion":"1.0","id":"a","source":"/s","type":"t"},{"specversion":"1.0","source":"/s","type":"t"}]`)
		}), "event 1 of the record batch"},
		{"types of another number of events", with(func(m *nats.Msg) { m.Header[HeaderBatchTypes] = []string{"-"} }), "1 values of eb-batch-types"},
		{"a type that does not parse", with(func(m *nats.Msg) {
			m.Data = []byte(`[{"specversion":"1.0","id":"a","source":"/s","type":"t","n":"x"},{"specversion":"1.0","id":"b","source":"/s","type":"t"}]`)
			m.Header[HeaderBatchTypes] = []string{"n=Integer", "-"}
		}), "extension n of type Integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeAll(tc.m)
			assert.ErrorContains(t, err, tc.want)
			assert.Nil(t, got)
		})
	}
}

// EncodeBatches keeps every record batch within maxBytes (with a Nats-Msg-Id, whatever the events' JSON forms
// cost: escapes, base64, typed extensions, traceparents), covers the events in order, and makes the same parts of
// the same events.
func TestEncodeBatchesFitsMaxBytes(t *testing.T) {
	t.Parallel()
	var events []*event.Event
	var traces, ids []string
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for round := range 6 {
		for i, e := range batchCases() {
			e.SetID(fmt.Sprintf("%s-%d", e.ID(), round))
			switch (i + round) % 3 {
			case 0: // text whose JSON form is six times its size
				e.SetDataContentType("text/plain")
				e.DataEncoded = []byte(strings.Repeat("\x01", 300*round))
			case 1:
				e.DataEncoded, e.DataBase64 = []byte(strings.Repeat("\xff", 500*round)), true
			}
			events = append(events, e)
			traces = append(traces, map[bool]string{true: tp}[i%2 == 0])
			ids = append(ids, HopMsgID(PutMsgID(e.Source(), e.ID()), "route", "r"))
		}
	}
	msgID := strings.Repeat("f", 64)
	for _, maxBytes := range []int{0, 1, 2 << 10, 8 << 10, 64 << 10} {
		t.Run(fmt.Sprint(maxBytes), func(t *testing.T) {
			parts, err := EncodeBatches(events, nil, traces, ids, maxBytes)
			require.NoError(t, err)
			again, err := EncodeBatches(events, nil, traces, ids, maxBytes)
			require.NoError(t, err)
			require.Len(t, again, len(parts))
			next, batches := 0, 0
			for p, part := range parts {
				require.Equal(t, next, part.From, "parts are consecutive")
				require.Greater(t, part.To, part.From)
				require.Equal(t, [2]int{part.From, part.To}, [2]int{again[p].From, again[p].To}, "the same parts again")
				next = part.To
				part.Msg.Header.Set(nats.MsgIdHdr, msgID)
				got, err := DecodeAll(part.Msg)
				require.NoError(t, err)
				require.Len(t, got, part.To-part.From)
				for i, e := range got {
					require.Equal(t, events[part.From+i].ID(), e.ID())
					if IsBatch(part.Msg.Header) {
						want := map[bool]string{true: tp}[traces[part.From+i] != ""]
						require.Equal(t, want, EntryHeaders(part.Msg.Header, part.To-part.From)[i].Get("traceparent"))
						require.Equal(t, ids[part.From+i], EntryMsgID(part.Msg.Header, i, e), "each event keeps its id")
						require.Empty(t, EntryHeaders(part.Msg.Header, part.To-part.From)[i].Values(HeaderBatchIDs))
					}
				}
				if part.To-part.From == 1 {
					require.False(t, IsBatch(part.Msg.Header), "an event alone is a message of Encode")
					continue
				}
				batches++
				if maxBytes > 0 {
					require.LessOrEqual(t, part.Msg.Size(), maxBytes, "part %d of %d events", p, part.To-part.From)
				}
			}
			require.Equal(t, len(events), next)
			switch maxBytes {
			case 0:
				require.Len(t, parts, 1, "no bound: one batch")
			case 1:
				require.Len(t, parts, len(events), "nothing fits: every event alone")
			default:
				require.Greater(t, batches, 0)
			}
		})
	}
	_, err := EncodeBatches(events, nil, traces[:1], nil, 0)
	require.ErrorContains(t, err, "1 traceparents for 60 events")
	_, err = EncodeBatches(events, nil, nil, ids[:2], 0)
	require.ErrorContains(t, err, "2 ids for 60 events")
}

// The JSON form DecodeEntries gives of each event of a batch is what cloudevent.Marshal writes for the event read,
// so a batch made again of those forms (a router's copies) is the batch that marshalling them again would make.
func TestDecodeEntriesGivesTheJSONFormStored(t *testing.T) {
	t.Parallel()
	events := batchCases()
	m, err := EncodeBatch(events, nil, nil)
	require.NoError(t, err)
	got, jsons, err := DecodeEntries(m)
	require.NoError(t, err)
	require.Len(t, jsons, len(events))
	for i, e := range got {
		c := *e
		if c.DataEncoded != nil && len(c.DataEncoded) == 0 {
			c.DataEncoded = nil // as EncodeBatch stores it
		}
		want, err := cloudevent.Marshal(&c)
		require.NoError(t, err)
		require.Equal(t, string(want), string(jsons[i]), "event %d", i)
	}
	ids := make([]string, len(got))
	for i := range ids {
		ids[i] = fmt.Sprint("id", i)
	}
	reused, err := EncodeBatches(got, jsons, nil, ids, 0)
	require.NoError(t, err)
	marshalled, err := EncodeBatches(got, nil, nil, ids, 0)
	require.NoError(t, err)
	require.Len(t, reused, 1)
	require.Equal(t, marshalled[0].Msg.Header, reused[0].Msg.Header)
	require.Equal(t, string(marshalled[0].Msg.Data), string(reused[0].Msg.Data))
	_, err = EncodeBatches(got, jsons[:1], nil, nil, 0)
	require.ErrorContains(t, err, "1 JSON forms for 10 events")

	single, jsons, err := DecodeEntries(Encode(events[0]))
	require.NoError(t, err)
	require.Len(t, single, 1)
	require.Nil(t, jsons, "a message of one event holds no JSON form")
}

// An event alone is a message of Encode, made without its JSON form: a call of one event (a webhook, a binary
// PutEvents) is not marshalled for nothing.
func TestEncodeBatchesOfOneEventIsEncode(t *testing.T) {
	for _, e := range batchCases() {
		parts, err := EncodeBatches([]*event.Event{e}, nil, nil, nil, 1<<20)
		require.NoError(t, err)
		require.Len(t, parts, 1)
		want := Encode(e)
		require.Equal(t, want.Header, parts[0].Msg.Header)
		require.Equal(t, want.Data, parts[0].Msg.Data)
	}
	e := batchCases()[2]
	one := []*event.Event{e}
	encode := testing.AllocsPerRun(50, func() { _ = Encode(e) })
	batches := testing.AllocsPerRun(50, func() { _, _ = EncodeBatches(one, nil, nil, nil, 1<<20) })
	assert.LessOrEqual(t, batches, encode+1, "Encode and the slice of parts")
}

// A record batch's events are written in place in the body its message keeps, each once: the bytes EncodeBatches
// allocates for a batch of events with 4 KiB of JSON data each are about its body's, not twice them (a JSON form
// per event, then the body they were copied into).
func TestEncodeBatchesWritesEventsInPlace(t *testing.T) {
	data := []byte(`{"pad":"` + strings.Repeat("0123456789abcdef", 256) + `"}`)
	events := make([]*event.Event, 10)
	for i := range events {
		e := event.New()
		e.SetID(fmt.Sprint("id-", i))
		e.SetSource("/bench")
		e.SetType("put")
		e.SetDataContentType("application/json")
		e.DataEncoded = data
		events[i] = &e
	}
	parts, err := EncodeBatches(events, nil, nil, nil, 1<<20)
	require.NoError(t, err)
	require.Len(t, parts, 1)
	body := len(parts[0].Msg.Data)
	var before, after runtime.MemStats
	const runs = 20
	runtime.ReadMemStats(&before)
	for range runs {
		_, _ = EncodeBatches(events, nil, nil, nil, 1<<20)
	}
	runtime.ReadMemStats(&after)
	perCall := float64(after.TotalAlloc-before.TotalAlloc) / runs
	assert.Less(t, perCall, 1.3*float64(body), "allocated %.0f bytes for a body of %d", perCall, body)
	t.Logf("allocated %.0f bytes for a body of %d", perCall, body)
}
