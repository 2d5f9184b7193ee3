package aws

import (
	"encoding/json"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/web"
)

// The resources of part 2 (connections, API destinations, archives, replays) are named in the request's body by
// their own members (Name, ArchiveName, ReplayName) or by ARNs:
//
//	arn:aws:events:<region>:<account>:connection/<name>/<id>
//	arn:aws:events:<region>:<account>:api-destination/<name>/<id>
//	arn:aws:events:<region>:<account>:archive/<name>
//	arn:aws:events:<region>:<account>:replay/<name>
//
// <id> is the resource's immutable id: a resource deleted and created again under its name has another ARN. An ARN
// given back is taken with or without its id; with one, the id must be the resource's. An ARN of another account
// or region names a resource that does not exist, exactly as a name that exists nowhere.

// Kinds of resources in ARNs.
const (
	kindConnection     = "connection"
	kindAPIDestination = "api-destination"
	kindArchive        = "archive"
	kindReplay         = "replay"
)

// excIllegalStatus is AWS's answer to cancelling a replay that has ended.
const excIllegalStatus = "IllegalStatusException"

// checkName checks a name of a connection, an API destination, an archive or a replay given in member: AWS's names
// may hold dots (and an archive's be at most 48 characters), this product's may not.
func checkName(member, v string) error {
	if v == "" {
		return validation("Parameter %s is required.", member)
	}
	if domain.ValidateName(member, v) != nil {
		return validation("Parameter %s is not valid. Reason: %q breaks the rule of names here: 1 to 64 characters "+
			"of A-Z, a-z, 0-9, '_' and '-' (no '.', which AWS allows).", member, strings.ToValidUTF8(v, "?"))
	}
	return nil
}

// ref is what a request gives for a resource of one kind: its name, and the id its ARN ends in ("" when it gives
// none).
type ref struct {
	name, id string
	// foreign: an ARN of another account or region, a resource that does not exist for this request.
	foreign bool
}

// refOf reads member, a name or an ARN of a resource of kind (see above). A malformed value is a
// ValidationException naming member and the forms it takes.
func (a *api) refOf(c *gin.Context, member, kind, v string) (ref, error) {
	if v == "" {
		return ref{}, validation("Parameter %s is required.", member)
	}
	if !strings.HasPrefix(v, "arn:") {
		return ref{name: v}, checkName(member, v)
	}
	n, ok := parseARN(v)
	rest, isKind := strings.CutPrefix(n.resource, kind+"/")
	name, id, _ := strings.Cut(rest, "/")
	withID := kind == kindConnection || kind == kindAPIDestination
	if !ok || n.service != Service || !isKind || name == "" || (!withID && id != "") || strings.Contains(id, "/") {
		form := kind + "/<name>"
		if withID {
			form += "[/<id>]"
		}
		return ref{}, validation("Parameter %s is not valid. Reason: %q is not the name or ARN of a %s "+
			"(arn:aws:events:<region>:<account>:%s).", member, strings.ToValidUTF8(v, "?"), strings.ReplaceAll(kind, "-", " "), form)
	}
	if n.region != a.region || n.account != accountNumber(c) {
		return ref{name: name, id: id, foreign: true}, nil
	}
	return ref{name: name, id: id}, checkName(member, name)
}

// connectionARN is the ARN of the account's connection of that name and id.
func (a *api) connectionARN(c *gin.Context, name, id string) string {
	return a.arnOf(c, kindConnection+"/"+name+"/"+id)
}

// archiveARN is the ARN of the account's archive of that name.
func (a *api) archiveARN(c *gin.Context, name string) string { return a.arnOf(c, kindArchive+"/"+name) }

// replayARN is the ARN of the account's replay of that name.
func (a *api) replayARN(c *gin.Context, name string) string { return a.arnOf(c, kindReplay+"/"+name) }

const auditKey = "eventbridge.aws.auditResource"

// about names, in the audit entry of a call of h, the resource of part 2 it acts on as /api/v1 names it: prefix
// ("connections", "replays", ...), followed by "/" and the body's member when the body gives it. A handler that
// knows better (an archive's bus) names it with auditAs. The body's own reading (decode) names it as part 1's
// resources, which these are not.
func about(prefix, member string, h gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		h(c)
		if r := c.GetString(auditKey); r != "" {
			web.SetAuditResource(c, r)
			return
		}
		v, _ := c.Get(bodyKey)
		body, _ := v.([]byte)
		var in map[string]json.RawMessage
		_ = json.Unmarshal(body, &in) // a body that is no object names nothing; its error is answered by h
		var name string
		if member != "" {
			_ = json.Unmarshal(in[member], &name)
		}
		if name == "" || strings.ContainsAny(name, "/:") {
			web.SetAuditResource(c, prefix)
			return
		}
		web.SetAuditResource(c, prefix+"/"+name)
	}
}

// auditAs names the resource of the request in its audit entry (see about).
func auditAs(c *gin.Context, resource string) { c.Set(auditKey, resource) }
