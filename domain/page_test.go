package domain

import (
	"errors"
	"testing"
)

// A position inside a record batch and one after a whole message both survive their token; a token this API did
// not make is a validation error naming nextToken, and a token of SequenceToken reads as a position after it.
func TestPositionToken(t *testing.T) {
	for _, pos := range []Position{{After: 7}, {After: 7, Skip: 2}, {After: 0, Skip: 1}, {After: 1 << 60, Skip: 999}} {
		got, err := Page{Token: PositionToken(pos)}.AfterPosition()
		if err != nil || got != pos {
			t.Errorf("%+v: read back %+v, %v", pos, got, err)
		}
	}
	if tok := PositionToken(Position{}); tok != "" {
		t.Errorf("the end has the token %q", tok)
	}
	if got, err := (Page{}).AfterPosition(); err != nil || got != (Position{}) {
		t.Errorf("a first page starts at %+v, %v", got, err)
	}
	if got, err := (Page{Token: SequenceToken(42)}).AfterPosition(); err != nil || got != (Position{After: 42}) {
		t.Errorf("a sequence token reads as %+v, %v", got, err)
	}
	for _, raw := range []string{"x", "7.", "7.0", "7.-1", "7.x", ".2", "-1"} {
		_, err := Page{Token: EncodePageToken(raw)}.AfterPosition()
		var de *Error
		if !errors.As(err, &de) || de.Field != "nextToken" {
			t.Errorf("token %q: %v", raw, err)
		}
	}
}
