package stream

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// Headers of a record batch: one message that holds several events (EncodeBatch).
const (
	// HeaderBatch marks a record batch and holds the number of its events. Its body is the CloudEvents JSON batch
	// format (application/cloudevents-batch+json): a JSON array of the events in the JSON format.
	HeaderBatch = "eb-batch"
	// HeaderBatchTypes holds, one value per event in order, what HeaderTypes holds for a single event ("-" for an
	// event whose extensions are all Strings); absent when every event's are.
	HeaderBatchTypes = "eb-batch-types"
	// HeaderBatchTrace holds, one value per event in order, the W3C traceparent of the span that stored the event
	// ("-" for none); absent when no event has one. EntryHeaders gives it to the event's reader as "traceparent".
	HeaderBatchTrace = "eb-batch-traceparent"
	// HeaderBatchIDs holds, one value per event in order, the id the event has as its own (the Nats-Msg-Id it
	// would have as a message of its own; EntryMsgID): set on the record batches of a router's copies, whose
	// events' ids are hop ids (HopMsgID); absent on a bus's own batches, whose events' ids are their PutMsgIDs.
	HeaderBatchIDs = "eb-batch-ids"
)

// ContentTypeBatch is the media type of a record batch's body.
const ContentTypeBatch = "application/cloudevents-batch+json"

// noValue stands for an absent value in the per-event headers of a batch.
const noValue = "-"

// EncodeBatch returns events as one message: their JSON forms (cloudevent.Marshal) in a JSON array, HeaderBatch
// their number, HeaderBatchTypes the types of their extensions that are not Strings (so that DecodeAll gives back
// what Decode gives for a message of Encode), HeaderBatchTrace the traceparents in traces (nil, or one per
// event, "" for none) and HeaderBatchIDs the ids in ids (nil, or one per event). The caller sets the subject and
// Nats-Msg-Id. The events must have passed Check.
func EncodeBatch(events []*event.Event, traces, ids []string) (*nats.Msg, error) {
	if len(events) == 0 {
		return nil, errors.New("a record batch holds at least one event")
	}
	if err := perEvent(len(events), traces, ids); err != nil {
		return nil, err
	}
	body := make([]byte, 0, bodySize(events, nil))
	types := make([]string, len(events))
	for i, e := range events {
		var err error
		if body, types[i], err = appendEntry(body, e, nil); err != nil {
			return nil, fmt.Errorf("event %d of the batch: %w", i, err)
		}
	}
	return assemble(body, types, traces, ids), nil
}

// perEvent checks that traces and ids are nil or have one value per event.
func perEvent(n int, traces, ids []string) error {
	if traces != nil && len(traces) != n {
		return fmt.Errorf("%d traceparents for %d events", len(traces), n)
	}
	if ids != nil && len(ids) != n {
		return fmt.Errorf("%d ids for %d events", len(ids), n)
	}
	return nil
}

// MaxPayload is the largest message nc's server takes, for EncodeBatches: its max_payload, or a NATS server's
// default (1 MiB) while it is not known (never connected).
func MaxPayload(nc *nats.Conn) int {
	if n := int(nc.MaxPayload()); n > 0 {
		return n
	}
	return 1 << 20
}

// Part is one message of EncodeBatches: events[From:To] in order.
type Part struct {
	Msg      *nats.Msg
	From, To int
}

// batchOverhead bounds the bytes of a record batch's message that do not depend on its events: the header line,
// HeaderBatch, the content type, a Nats-Msg-Id and the array's brackets.
const batchOverhead = 256

// EncodeBatches returns events, in order, as messages of at most maxBytes of headers and body each (0: no bound):
// record batches (EncodeBatch) of consecutive events, and a message of Encode for an event that is alone in its
// part, or whose JSON form cannot be made (its extension values). jsons is nil, or holds for each event its JSON
// form as a record batch read by DecodeEntries holds it (nil: made with cloudevent.Marshal), which a batch holds as
// it is. traces and ids are as for EncodeBatch; an event
// alone in its message gets neither (the caller sets its Nats-Msg-Id and injects its span's trace). The parts
// depend only on the events, traces, ids and maxBytes, so the same events put again make the same messages. An
// event that does not fit maxBytes even alone is a message of its own that JetStream will refuse; Check keeps
// events well under a server's payload.
func EncodeBatches(events []*event.Event, jsons [][]byte, traces, ids []string, maxBytes int) ([]Part, error) {
	if err := perEvent(len(events), traces, ids); err != nil {
		return nil, err
	}
	if jsons != nil && len(jsons) != len(events) {
		return nil, fmt.Errorf("%d JSON forms for %d events", len(jsons), len(events))
	}
	if len(events) == 1 { // alone in its part, whatever maxBytes: its JSON form is not needed
		return []Part{{Msg: Encode(events[0]), From: 0, To: 1}}, nil
	}
	var parts []Part
	// The run: events[from:from+len(types)], whose entries body holds, written in place as a record batch's body;
	// size bounds its message.
	var body []byte
	var types []string
	from, size := 0, batchOverhead
	left := bodySize(events, jsons) // what the entries of the events not yet in a part take, about
	flush := func() {
		switch len(types) {
		case 0:
		case 1:
			parts = append(parts, Part{Msg: Encode(events[from]), From: from, To: from + 1})
		default:
			var tr, id []string
			if traces != nil {
				tr = traces[from : from+len(types)]
			}
			if ids != nil {
				id = ids[from : from+len(types)]
			}
			parts = append(parts, Part{Msg: assemble(body, types, tr, id), From: from, To: from + len(types)})
		}
		from += len(types)
		body, types, size = nil, nil, batchOverhead // the part's message has the body: the next run has its own
	}
	for i, e := range events {
		var form []byte
		if jsons != nil {
			form = jsons[i]
		}
		if body == nil {
			body = make([]byte, 0, roomFor(left, maxBytes))
		}
		mark := len(body)
		grown, typ, err := appendEntry(body, e, form)
		if err != nil {
			flush()
			parts = append(parts, Part{Msg: Encode(e), From: i, To: i + 1})
			from = i + 1
			continue
		}
		body = grown
		left -= len(body) - mark
		n := entrySize(len(body)-mark, typ)
		if traces != nil {
			n += len(HeaderBatchTrace) + 4 + len(cmp.Or(traces[i], noValue))
		}
		if ids != nil {
			n += len(HeaderBatchIDs) + 4 + len(ids[i])
		}
		if len(types) > 0 && maxBytes > 0 && size+n > maxBytes {
			// The entry starts the next run: the run before it ends at its comma.
			entry := body[mark+1:]
			body = body[:mark]
			flush()
			body = append(append(make([]byte, 0, roomFor(left+len(entry), maxBytes)), '['), entry...)
		}
		types = append(types, typ)
		size += n
	}
	flush()
	return parts, nil
}

// entrySize bounds what an entry of json bytes (its comma or bracket included) whose HeaderBatchTypes value is
// types adds to its batch's message: its JSON form, the comma, and the header's value ("Name: value\r\n").
func entrySize(json int, types string) int {
	return json + len(HeaderBatchTypes) + 4 + len(types)
}

// roomFor is the room a record batch's body is made with when its entries take about left bytes, under maxBytes
// (0: no bound).
func roomFor(left, maxBytes int) int {
	if maxBytes > 0 {
		left = min(left, maxBytes)
	}
	return max(left, 0) + 2
}

// bodySize is about what the entries of events take in a record batch's body (jsons as for EncodeBatches), for the
// room a body is made with: an estimate, exact for the JSON forms given, that the body grows past when short.
func bodySize(events []*event.Event, jsons [][]byte) int {
	n := 2
	for i, e := range events {
		if jsons != nil && jsons[i] != nil {
			n += len(jsons[i]) + 1
			continue
		}
		d := len(e.DataEncoded)
		if e.DataBase64 {
			d = d*4/3 + 4
		}
		n += d + 256 + 1
	}
	return n
}

// appendEntry appends to body (a record batch's body: its opening bracket and the entries before) e's entry: a
// comma unless it is the first, then its JSON form, form when not nil, else what cloudevent.Marshal writes. It
// returns the body and the entry's HeaderBatchTypes value; on an error, the body as it was.
func appendEntry(body []byte, e *event.Event, form []byte) ([]byte, string, error) {
	if len(body) == 0 {
		body = append(body, '[')
	} else {
		body = append(body, ',')
	}
	types := cmp.Or(typesOf(e), noValue)
	if form != nil {
		return append(body, form...), types, nil
	}
	if e.DataEncoded != nil && len(e.DataEncoded) == 0 {
		// Decode gives no data for an empty body; so does a batch.
		c := *e
		c.DataEncoded = nil
		e = &c
	}
	out, err := cloudevent.AppendMarshal(body, e)
	if err != nil {
		return body[:len(body)-1], "", err
	}
	return out, types, nil
}

// assemble makes the record batch of body (its opening bracket and its entries, comma-separated; assemble closes
// it and the message keeps it), types their HeaderBatchTypes values, traces (nil, or one per entry, "" for none)
// and ids (nil, or one per entry).
func assemble(body []byte, types, traces, ids []string) *nats.Msg {
	m := nats.NewMsg("")
	body = append(body, ']')
	m.Header.Set(HeaderBatch, strconv.Itoa(len(types)))
	m.Header.Set(headerContentType, ContentTypeBatch)
	if slices.ContainsFunc(types, func(t string) bool { return t != noValue }) {
		m.Header[HeaderBatchTypes] = types
	}
	if slices.ContainsFunc(traces, func(tp string) bool { return tp != "" }) {
		vals := make([]string, len(traces))
		for i, tp := range traces {
			vals[i] = cmp.Or(tp, noValue)
		}
		m.Header[HeaderBatchTrace] = vals
	}
	if ids != nil {
		m.Header[HeaderBatchIDs] = slices.Clone(ids)
	}
	m.Data = body
	return m
}

// typesOf is the HeaderTypes value of e's extensions ("" when all are Strings).
func typesOf(e *event.Event) string {
	var typed []string
	for k, v := range e.Extensions() {
		if _, typ, err := extensionValue(v); err == nil && typ != "" {
			typed = append(typed, k+"="+typ)
		}
	}
	if len(typed) == 0 {
		return ""
	}
	slices.Sort(typed)
	return strings.Join(typed, ",")
}

// IsBatch reports whether a message is a record batch.
func IsBatch(h nats.Header) bool { return h.Get(HeaderBatch) != "" }

// DecodeAll returns the events a stored message holds: the one event of a message of Encode (Decode), or the
// events of a record batch in order, each as Decode would give it from a message of Encode. A batch whose body or
// headers do not agree with its count is an error, as is any event of it that cannot be read: a batch is stored
// whole or not at all, so a part of one is never delivered.
func DecodeAll(m *nats.Msg) ([]*event.Event, error) {
	events, _, err := DecodeEntries(m)
	return events, err
}

// DecodeEntries is DecodeAll, with the JSON form of each event of a record batch as the batch holds it (a part of
// m.Data, read-only; what cloudevent.Marshal writes for the event, which EncodeBatches can store again as it is);
// jsons is nil for a message of Encode.
func DecodeEntries(m *nats.Msg) (events []*event.Event, jsons [][]byte, err error) {
	if !IsBatch(m.Header) {
		e, err := Decode(m)
		if err != nil {
			return nil, nil, err
		}
		return []*event.Event{e}, nil, nil
	}
	n, err := strconv.Atoi(m.Header.Get(HeaderBatch))
	if err != nil || n < 1 {
		return nil, nil, fmt.Errorf("header %s: %q is not a number of events", HeaderBatch, m.Header.Get(HeaderBatch))
	}
	entries, err := cloudevent.UnmarshalBatch(m.Data)
	if err != nil {
		return nil, nil, fmt.Errorf("record batch: %w", err)
	}
	if len(entries) != n {
		return nil, nil, fmt.Errorf("record batch of %d events holds %d", n, len(entries))
	}
	types := m.Header.Values(HeaderBatchTypes)
	if len(types) != 0 && len(types) != n {
		return nil, nil, fmt.Errorf("record batch of %d events: %d values of %s", n, len(types), HeaderBatchTypes)
	}
	if ids := m.Header.Values(HeaderBatchIDs); len(ids) != 0 && len(ids) != n {
		return nil, nil, fmt.Errorf("record batch of %d events: %d values of %s", n, len(ids), HeaderBatchIDs)
	}
	out, forms := make([]*event.Event, n), make([][]byte, n)
	for i, en := range entries {
		if en.Err != nil {
			return nil, nil, fmt.Errorf("event %d of the record batch: %w", i, en.Err)
		}
		e := en.Event
		if len(types) > 0 && types[i] != noValue {
			if err := retype(e, types[i]); err != nil {
				return nil, nil, fmt.Errorf("event %d of the record batch: %w", i, err)
			}
		}
		if err := hasRequired(e); err != nil {
			return nil, nil, fmt.Errorf("event %d of the record batch: %w", i, err)
		}
		out[i], forms[i] = e, en.JSON
	}
	return out, forms, nil
}

// retype gives e's extensions named in typed (HeaderTypes' syntax) their types back from their text.
func retype(e *event.Event, typed string) error {
	for _, pair := range strings.Split(typed, ",") {
		name, typ, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		v, ok := e.Extensions()[name]
		if !ok {
			continue
		}
		text, err := extensionText(v)
		if err != nil {
			return fmt.Errorf("extension %s: %w", name, err)
		}
		value, err := parseExtension(typ, text)
		if err != nil {
			return fmt.Errorf("extension %s of type %s: %w", name, typ, err)
		}
		e.SetExtension(name, value)
	}
	return nil
}

// EntryMsgID is the id of event e at index i of a message that DecodeAll read (headers h): the message's
// Nats-Msg-Id for a single event; for an event of a record batch, the id it would have stored alone: its value of
// HeaderBatchIDs (a router's copies), else PutMsgID of its source and id (a bus's own batches hold events put on
// it). The later hops of the event (routing, dead-lettering, forwarding) hash it, so they are stored once inside
// the duplicate window when they are retried, as they are for an event stored alone.
func EntryMsgID(h nats.Header, i int, e *event.Event) string {
	if !IsBatch(h) {
		return h.Get(nats.MsgIdHdr)
	}
	if ids := h.Values(HeaderBatchIDs); i < len(ids) {
		return ids[i]
	}
	return PutMsgID(cloudevent.Source(e), e.ID())
}

// EntryHeaders returns the headers a reader sees for each of the n events of a message that DecodeAll read: the
// message's own for a single event; for a batch, the message's headers without those of the batch, with the event's
// traceparent (HeaderBatchTrace) as "traceparent". The events without a traceparent share one map: the headers are
// read-only.
func EntryHeaders(h nats.Header, n int) []nats.Header {
	out := make([]nats.Header, n)
	if !IsBatch(h) {
		for i := range out {
			out[i] = h
		}
		return out
	}
	common := nats.Header{}
	for k, v := range h {
		switch k {
		case HeaderBatch, HeaderBatchTypes, HeaderBatchTrace, HeaderBatchIDs, headerContentType:
		default:
			common[k] = v
		}
	}
	tps := h.Values(HeaderBatchTrace)
	for i := range out {
		out[i] = common
		if i < len(tps) && tps[i] != noValue {
			own := maps.Clone(common)
			own.Set("traceparent", tps[i])
			out[i] = own
		}
	}
	return out
}
