package domain

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// Page asks for one page of a list ordered by name: at most Limit items after the position in Token.
type Page struct {
	Limit int
	Token string
	// Prefix, when set, keeps the names that start with it (lists of named resources).
	Prefix string
}

const (
	// DefaultPageLimit is the page size when none is asked for.
	DefaultPageLimit = 50
	// MaxPageLimit is the largest page size.
	MaxPageLimit = 500
)

// NewPage validates a limit (0 means the default) and an opaque next token from a previous page.
func NewPage(limit int, token string) (Page, error) {
	if limit == 0 {
		limit = DefaultPageLimit
	}
	if limit < 1 || limit > MaxPageLimit {
		return Page{}, Invalid("limit", "limit must be between 1 and %s", strconv.Itoa(MaxPageLimit))
	}
	if _, err := DecodePageToken(token); err != nil {
		if _, kerr := DecodeKeyToken(token); kerr != nil {
			return Page{}, err
		}
	}
	return Page{Limit: limit, Token: token}, nil
}

// After returns the name after which the page starts ("" for the first page).
func (p Page) After() string {
	s, _ := DecodePageToken(p.Token)
	return s
}

// EncodePageToken makes the opaque token of the page that starts after name.
func EncodePageToken(name string) string {
	if name == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(name))
}

// DecodePageToken reads a token made by EncodePageToken.
func DecodePageToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || ValidateBusName("nextToken", string(b)) != nil { // the widest alphabet of names
		return "", Invalid("nextToken", "nextToken is not a token this API returned")
	}
	return string(b), nil
}

// EncodeKeyToken makes the opaque token of the page that starts after a composite key, for lists ordered by
// several columns.
func EncodeKeyToken(key ...string) string {
	b, _ := json.Marshal(key) // strings always marshal
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeKeyToken reads a token made by EncodeKeyToken.
func DecodeKeyToken(token string) ([]string, error) {
	var key []string
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || json.Unmarshal(b, &key) != nil || len(key) == 0 {
		return nil, Invalid("nextToken", "nextToken is not a token this API returned")
	}
	return key, nil
}

// AfterKey returns the composite key after which the page starts (nil for the first page).
func (p Page) AfterKey() []string {
	if p.Token == "" {
		return nil
	}
	key, _ := DecodeKeyToken(p.Token)
	return key
}

// Size is the page's limit, or DefaultPageLimit when it has none.
func (p Page) Size() int {
	if p.Limit <= 0 {
		return DefaultPageLimit
	}
	return p.Limit
}

// AfterSequence reads the stream sequence a page of a scan starts after (0 for the first page), from a token made
// by SequenceToken; a token that is not one is a validation error naming nextToken.
func (p Page) AfterSequence() (uint64, error) {
	if p.Token == "" {
		return 0, nil
	}
	s, err := DecodePageToken(p.Token)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, Invalid("nextToken", "nextToken is not a token this API returned")
	}
	return n, nil
}

// SequenceToken is the token of the page of a scan that starts after the stream sequence n ("" for 0: the end).
func SequenceToken(n uint64) string {
	if n == 0 {
		return ""
	}
	return EncodePageToken(strconv.FormatUint(n, 10))
}

// AllPages collects every item of a list that list pages by name, page after page of MaxPageLimit (the dialects
// whose clients page by offset, or filter by prefix, read the whole list).
func AllPages[T any](ctx context.Context, list func(ctx context.Context, page Page) ([]T, string, error)) ([]T, error) {
	var all []T
	page := Page{Limit: MaxPageLimit}
	for {
		items, next, err := list(ctx, page)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" || len(items) == 0 {
			return all, nil
		}
		page.Token = next
	}
}

// Position is where a scan of a stream whose messages may hold several events (record batches) resumes: after the
// message at sequence After, skipping the first Skip events of the message at After+1 when it is still there (a
// page that ended inside it). The zero Position is the start of a first page, and the end of a last.
type Position struct {
	After uint64
	Skip  int
}

// AfterPosition reads the Position a page of a scan starts at, from a token made by PositionToken or SequenceToken
// (Skip 0); a token that is not one is a validation error naming nextToken.
func (p Page) AfterPosition() (Position, error) {
	if p.Token == "" {
		return Position{}, nil
	}
	s, err := DecodePageToken(p.Token)
	if err != nil {
		return Position{}, err
	}
	seq, skip, inside := strings.Cut(s, ".")
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return Position{}, Invalid("nextToken", "nextToken is not a token this API returned")
	}
	pos := Position{After: n}
	if inside {
		if pos.Skip, err = strconv.Atoi(skip); err != nil || pos.Skip < 1 {
			return Position{}, Invalid("nextToken", "nextToken is not a token this API returned")
		}
	}
	return pos, nil
}

// PositionToken is the token of the page of a scan that starts at pos ("" for the zero Position: the end).
func PositionToken(pos Position) string {
	if pos.Skip == 0 {
		return SequenceToken(pos.After)
	}
	return EncodePageToken(strconv.FormatUint(pos.After, 10) + "." + strconv.Itoa(pos.Skip))
}
