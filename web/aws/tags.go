package aws

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain/tag"
	"github.com/eventbridge-go/eventbridge/web"
)

// Tags of buses, rules, connections, API destinations and archives, named by their ARNs (TagResource,
// UntagResource, ListTagsForResource). They are kept by the resource's internal id (domain/tag): a resource deleted
// and made again under its name has none.

// Tag is AWS's tag.
type Tag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// taggedID resolves the ARN of a resource that takes tags to its internal id, answering AWS's messages when it
// does not exist (another account's or region's ARN included) or is of a kind that takes none.
func (a *api) taggedID(c *gin.Context, v string) (string, error) {
	if v == "" {
		return "", validation("Parameter ResourceARN is required.")
	}
	n, ok := parseARN(v)
	kind, rest, _ := strings.Cut(n.resource, "/")
	if !ok || n.service != Service || rest == "" {
		return "", validation("Parameter ResourceARN is not valid. Reason: %q is not the ARN of an event bus, a rule, "+
			"a connection, an API destination or an archive.", strings.ToValidUTF8(v, "?"))
	}
	if n.region != a.region || n.account != accountNumber(c) {
		return "", &Error{Type: excNotFound, Message: "Resource " + v + " does not exist."}
	}
	switch kind {
	case "event-bus":
		b, err := a.lookupBus(c, rest)
		if err != nil {
			return "", err
		}
		web.SetAuditResource(c, "buses/"+rest)
		return b.ID(), nil
	case "rule":
		busName, ruleName := DefaultBus, rest
		if i := strings.LastIndexByte(rest, '/'); i >= 0 { // bus names may hold slashes, rule names may not
			busName, ruleName = rest[:i], rest[i+1:]
		}
		_, r, err := a.lookupRule(c, "ResourceARN", busName, ruleName)
		if err != nil {
			return "", err
		}
		web.SetAuditResource(c, "buses/"+busName+"/rules/"+ruleName)
		return r.ID(), nil
	case kindConnection:
		conn, err := a.lookupConnection(c, "ResourceARN", v)
		if err != nil {
			return "", err
		}
		web.SetAuditResource(c, "connections/"+conn.Name())
		return conn.ID(), nil
	case kindAPIDestination:
		r, err := a.refOf(c, "ResourceARN", kindAPIDestination, v)
		if err != nil {
			return "", err
		}
		d, err := a.lookupAPIDestination(c, r.name)
		if err == nil && r.id != "" && r.id != d.ID() {
			err = apiDestinationNotFound(r.name)
		}
		if err != nil {
			return "", err
		}
		web.SetAuditResource(c, "api-destinations/"+d.Name())
		return d.ID(), nil
	case kindArchive:
		ar, err := a.lookupArchive(c, rest)
		if err != nil {
			return "", err
		}
		web.SetAuditResource(c, "buses/"+ar.BusName+"/archives/"+rest)
		return ar.ID(), nil
	}
	return "", validation("Parameter ResourceARN is not valid. Reason: a %s takes no tags here; event buses, rules, "+
		"connections, API destinations and archives do.", strings.ReplaceAll(kind, "-", " "))
}

type tagResourceIn struct {
	ResourceARN string
	Tags        []Tag
}

func (a *api) tagResource(c *gin.Context, in *tagResourceIn) (any, error) {
	id, err := a.taggedID(c, in.ResourceARN)
	if err != nil {
		return nil, err
	}
	if len(in.Tags) == 0 {
		return nil, validation("Parameter Tags must have at least 1 member.")
	}
	return struct{}{}, a.s.Tags.Tag(c.Request.Context(), web.AccountOf(c), id, tagsIn(in.Tags))
}

type untagResourceIn struct {
	ResourceARN string
	TagKeys     []string
}

func (a *api) untagResource(c *gin.Context, in *untagResourceIn) (any, error) {
	id, err := a.taggedID(c, in.ResourceARN)
	if err != nil {
		return nil, err
	}
	if len(in.TagKeys) == 0 {
		return nil, validation("Parameter TagKeys must have at least 1 member.")
	}
	return struct{}{}, a.s.Tags.Untag(c.Request.Context(), web.AccountOf(c), id, in.TagKeys)
}

type listTagsIn struct{ ResourceARN string }

func (a *api) listTagsForResource(c *gin.Context, in *listTagsIn) (any, error) {
	id, err := a.taggedID(c, in.ResourceARN)
	if err != nil {
		return nil, err
	}
	tags, err := a.s.Tags.List(c.Request.Context(), web.AccountOf(c), id)
	if err != nil {
		return nil, err
	}
	out := struct {
		Tags []Tag `json:"Tags"`
	}{Tags: make([]Tag, 0, len(tags))}
	for _, t := range tags {
		out.Tags = append(out.Tags, Tag{Key: t.Key, Value: t.Value})
	}
	return out, nil
}

// tagsIn is AWS's tags in the domain's form.
func tagsIn(tags []Tag) []tag.Tag {
	out := make([]tag.Tag, len(tags))
	for i, t := range tags {
		out[i] = tag.Tag{Key: t.Key, Value: t.Value}
	}
	return out
}

// tagCreated tags a resource just created with the Tags of its creation (CreateEventBus, PutRule,
// CreateConnection, CreateApiDestination): checked before it is created (checkTags), so that a creation with
// invalid tags changes nothing; a failure to store them afterwards is answered, and the resource stays.
func (a *api) tagCreated(c *gin.Context, resourceID string, tags []Tag) error {
	if len(tags) == 0 {
		return nil
	}
	return a.s.Tags.Tag(c.Request.Context(), web.AccountOf(c), resourceID, tagsIn(tags))
}

// checkTags validates the Tags of a creation before anything is created.
func checkTags(tags []Tag) error { return tag.Validate(tagsIn(tags)) }
