package cloudevent

import (
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
)

// Validate is e.Validate(), the SDK's check of an event's attributes, answered without the SDK's work for an event
// of specversion 1.0 that passes with plain attributes: the SDK builds the source's text (a URL's String) and
// parses the content type into a map of its parameters for every event, and an event put is checked twice (by the
// API and by the store's invariant). Any other event, and every event that fails, gets the SDK's answer itself, so
// the errors are the SDK's (FuzzValidateAsTheSDK).
func Validate(e *event.Event) error {
	if ec, ok := e.Context.(*event.EventContextV1); ok && len(e.FieldErrors) == 0 && validV1(ec) {
		return nil
	}
	return e.Validate()
}

// validV1 reports whether the SDK's EventContextV1.Validate passes ec, when it can tell cheaply; false: ask the SDK.
func validV1(ec *event.EventContextV1) bool {
	return nonBlank(ec.ID) && nonBlank(ec.Type) && nonBlank(uriText(&ec.Source.URL)) &&
		(ec.Subject == nil || nonBlank(*ec.Subject)) &&
		(ec.DataContentType == nil || plainMediaType(*ec.DataContentType)) &&
		(ec.DataSchema == nil || ec.DataSchema.Validate())
}

func nonBlank(s string) bool { return strings.TrimSpace(s) != "" }

// plainMediaType reports whether mime.ParseMediaType, which the SDK applies to a datacontenttype, takes s for
// certain: a token, or two joined by "/", without parameters or spaces ("application/json", "text/plain").
func plainMediaType(s string) bool {
	typ, sub, slash := strings.Cut(s, "/")
	return isToken(typ) && (!slash || isToken(sub))
}

// isToken reports whether s is a token of RFC 2045: one or more US-ASCII characters other than space, controls
// and tspecials.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?=`, c) >= 0 {
			return false
		}
	}
	return true
}
