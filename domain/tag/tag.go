// Package tag holds tags: key-value pairs an account attaches to its buses, rules, connections, API destinations and
// archives, as Amazon EventBridge's TagResource does. Tags are kept by the resource's internal id, so a renamed
// resource keeps them and a new resource of an old name starts without any; they go with the account.
package tag

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Limits of tags, as AWS has them.
const (
	MaxPerResource = 50
	MaxKeyLength   = 128
	MaxValueLength = 256
)

// Errors returned by this package and its repository.
var (
	// ErrTooMany: the resource would have more than MaxPerResource tags.
	ErrTooMany = &domain.Error{Kind: domain.KindLimitExceeded, Code: "TooManyTags", Field: "tags"}
)

// Tag is one tag.
type Tag struct {
	Key, Value string
}

// Validate checks tags as AWS does: keys of 1 to MaxKeyLength characters, values of at most MaxValueLength, no key
// beginning with the reserved "aws:", no key twice, at most MaxPerResource. Errors name the tag.
func Validate(tags []Tag) error {
	if len(tags) > MaxPerResource {
		return ErrTooMany.With("%d tags; a resource may have %d", len(tags), MaxPerResource)
	}
	seen := make(map[string]bool, len(tags))
	for i, t := range tags {
		if err := ValidateKey(t.Key); err != nil {
			return err
		}
		if utf8.RuneCountInString(t.Value) > MaxValueLength || !utf8.ValidString(t.Value) {
			return domain.Invalid("tags", "the value of tag %q is longer than %d characters or not UTF-8", t.Key, MaxValueLength)
		}
		if seen[t.Key] {
			return domain.Invalid("tags", "tag %d: the key %q is given twice", i, t.Key)
		}
		seen[t.Key] = true
	}
	return nil
}

// ValidateKey checks one tag key.
func ValidateKey(key string) error {
	switch n := utf8.RuneCountInString(key); {
	case n == 0 || n > MaxKeyLength || !utf8.ValidString(key):
		return domain.Invalid("tags", "a tag key must be 1 to %d characters of UTF-8, not %q", MaxKeyLength, key)
	case strings.HasPrefix(strings.ToLower(key), "aws:"):
		return domain.Invalid("tags", "the tag key %q begins with aws:, which is reserved", key)
	}
	return nil
}

// Repository stores the tags of resources.
type Repository interface {
	// Set adds tags to the resource, replacing the values of keys it has, in one transaction that refuses with
	// ErrTooMany when the resource would have more than MaxPerResource.
	Set(ctx context.Context, accountID, resourceID string, tags []Tag) error
	// Remove removes the tags of keys from the resource; keys it does not have are ignored.
	Remove(ctx context.Context, accountID, resourceID string, keys []string) error
	// List returns the resource's tags sorted by key.
	List(ctx context.Context, accountID, resourceID string) ([]Tag, error)
	// DeleteAccount deletes every tag of the account.
	DeleteAccount(ctx context.Context, accountID string) error
}

// Service holds the use cases of tags. The caller resolves the resource (and that it exists in the account).
type Service struct {
	Tags Repository
}

// Tag adds tags to a resource. Errors: validation, ErrTooMany.
func (s *Service) Tag(ctx context.Context, accountID, resourceID string, tags []Tag) error {
	if err := Validate(tags); err != nil {
		return err
	}
	if len(tags) == 0 {
		return nil
	}
	return s.Tags.Set(ctx, accountID, resourceID, tags)
}

// Untag removes the tags of keys from a resource.
func (s *Service) Untag(ctx context.Context, accountID, resourceID string, keys []string) error {
	for _, k := range keys {
		if n := utf8.RuneCountInString(k); n == 0 || n > MaxKeyLength {
			return domain.Invalid("tagKeys", "a tag key must be 1 to %d characters, not %q", MaxKeyLength, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return s.Tags.Remove(ctx, accountID, resourceID, slices.Compact(slices.Sorted(slices.Values(keys))))
}

// List returns a resource's tags sorted by key.
func (s *Service) List(ctx context.Context, accountID, resourceID string) ([]Tag, error) {
	return s.Tags.List(ctx, accountID, resourceID)
}

// PurgeAccount deletes every tag of the account (account.Purger).
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	return s.Tags.DeleteAccount(ctx, accountID)
}
