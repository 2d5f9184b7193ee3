package aws

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/web"
)

// Archives are the archives of /api/v1 (domain/archive); names are unique per account, as in AWS. An archive
// matches the CloudEvents its bus stores, so a pattern given here in AWS's syntax is rewritten as a rule's is
// (awsevent.RewritePattern: detail-type is type, detail is data) and kept in that form: the archive does not keep
// the text as written. DescribeArchive answers it in AWS's names again (awsevent.PatternForAWS), compact: the same pattern,
// not the same text. Archives are ENABLED from their creation.

// archiveStates are AWS's archive states, which ListArchives filters by.
var archiveStates = []string{string(archive.Enabled), "DISABLED", "CREATING", "UPDATING", "CREATE_FAILED", "UPDATE_FAILED"}

// Archive is an archive as ListArchives answers it (DescribeArchive adds its ARN, description and pattern).
type Archive struct {
	ArchiveName    string `json:"ArchiveName"`
	EventSourceArn string `json:"EventSourceArn"`
	State          string `json:"State"`
	RetentionDays  int    `json:"RetentionDays"`
	SizeBytes      uint64 `json:"SizeBytes"`
	EventCount     uint64 `json:"EventCount"`
	CreationTime   epoch  `json:"CreationTime"`
}

func (a *api) archiveOut(c *gin.Context, v archive.View) Archive {
	return Archive{ArchiveName: v.Name(), EventSourceArn: a.busARN(c, v.BusName), State: string(v.State()),
		RetentionDays: v.RetentionDays(), SizeBytes: v.Stats.Bytes, EventCount: v.Stats.Events, CreationTime: epoch(v.CreatedAt())}
}

// archiveStateOut is the answer of CreateArchive and UpdateArchive.
type archiveStateOut struct {
	ArchiveArn   string `json:"ArchiveArn"`
	State        string `json:"State"`
	CreationTime epoch  `json:"CreationTime"`
}

func (a *api) archiveState(c *gin.Context, v archive.View) archiveStateOut {
	return archiveStateOut{ArchiveArn: a.archiveARN(c, v.Name()), State: string(v.State()), CreationTime: epoch(v.CreatedAt())}
}

func archiveNotFound(name string) error {
	return &Error{Type: excNotFound, Message: "Archive " + name + " does not exist."}
}

// archivePattern is the pattern of an archive written in AWS's syntax, as the archive keeps it; nil for none.
func archivePattern(p string) ([]byte, error) {
	if strings.TrimSpace(p) == "" {
		return nil, nil
	}
	out, err := awsevent.RewritePattern([]byte(p))
	if err != nil {
		return nil, &Error{Type: excInvalidEventPattern, Message: "Event pattern is not valid. Reason: " + err.Error()}
	}
	return out, nil
}

type createArchiveIn struct {
	ArchiveName      string
	EventSourceArn   string
	Description      string
	EventPattern     string
	RetentionDays    int
	KmsKeyIdentifier string
}

// createArchive creates an archive of a bus of the account; it answers once the bus's router archives.
func (a *api) createArchive(c *gin.Context, in *createArchiveIn) (any, error) {
	if err := checkName("ArchiveName", in.ArchiveName); err != nil {
		return nil, err
	}
	if in.KmsKeyIdentifier != "" {
		return nil, refuseUnsupported("KmsKeyIdentifier", "events are not encrypted with customer keys")
	}
	if in.EventSourceArn == "" {
		return nil, validation("Parameter EventSourceArn is required.")
	}
	busName, err := a.busName(c, "EventSourceArn", in.EventSourceArn)
	if err != nil {
		return nil, err
	}
	auditAs(c, "buses/"+busName+"/archives/"+in.ArchiveName)
	pattern, err := archivePattern(in.EventPattern)
	if err != nil {
		return nil, err
	}
	v, err := a.s.Archives.Create(c.Request.Context(), web.AccountOf(c), busName, archive.Spec{Name: in.ArchiveName,
		Description: in.Description, EventPattern: pattern, RetentionDays: in.RetentionDays})
	switch {
	case errors.Is(err, bus.ErrNotFound):
		return nil, &Error{Type: excNotFound, Message: "Event bus " + busName + " does not exist."}
	case errors.Is(err, archive.ErrAlreadyExists):
		return nil, &Error{Type: excAlreadyExists, Message: "Archive " + in.ArchiveName + " already exists."}
	case err != nil:
		return nil, err
	}
	return a.archiveState(c, v), nil
}

type archiveNameIn struct{ ArchiveName string }

// lookupArchive reads the account's archive of that name, answering AWS's message when it does not exist.
func (a *api) lookupArchive(c *gin.Context, name string) (archive.View, error) {
	if err := checkName("ArchiveName", name); err != nil {
		return archive.View{}, err
	}
	v, err := a.s.Archives.Get(c.Request.Context(), web.AccountOf(c), "", name)
	if errors.Is(err, archive.ErrNotFound) {
		return v, archiveNotFound(name)
	}
	if err == nil {
		auditAs(c, "buses/"+v.BusName+"/archives/"+name)
	}
	return v, err
}

// ArchiveDescription is what DescribeArchive answers.
type ArchiveDescription struct {
	Archive
	ArchiveArn   string `json:"ArchiveArn"`
	Description  string `json:"Description,omitempty"`
	EventPattern string `json:"EventPattern,omitempty"`
}

func (a *api) describeArchive(c *gin.Context, in *archiveNameIn) (any, error) {
	v, err := a.lookupArchive(c, in.ArchiveName)
	if err != nil {
		return nil, err
	}
	out := ArchiveDescription{Archive: a.archiveOut(c, v), ArchiveArn: a.archiveARN(c, v.Name()), Description: v.Description()}
	if p := v.EventPattern(); len(p) > 0 {
		aws, err := awsevent.PatternForAWS(p)
		if err != nil {
			return nil, err
		}
		out.EventPattern = string(aws)
	}
	return out, nil
}

// deleteArchive deletes an archive and every event it holds.
func (a *api) deleteArchive(c *gin.Context, in *archiveNameIn) (any, error) {
	v, err := a.lookupArchive(c, in.ArchiveName)
	if err != nil {
		return nil, err
	}
	err = a.s.Archives.Delete(c.Request.Context(), web.AccountOf(c), v.BusName, in.ArchiveName)
	if errors.Is(err, archive.ErrNotFound) || errors.Is(err, bus.ErrNotFound) {
		return nil, archiveNotFound(in.ArchiveName)
	}
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

type listArchivesIn struct {
	NamePrefix     string
	EventSourceArn string
	State          string
	NextToken      string
	Limit          *int
}

func (a *api) listArchives(c *gin.Context, in *listArchivesIn) (any, error) {
	if in.State != "" && !slices.Contains(archiveStates, in.State) {
		return nil, validation("Parameter State is not valid: %q is not one of %v.", in.State, archiveStates)
	}
	busName := ""
	if in.EventSourceArn != "" {
		var err error
		if busName, err = a.busName(c, "EventSourceArn", in.EventSourceArn); err != nil {
			return nil, err
		}
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]archive.View, string, error) {
		return a.s.Archives.List(ctx, web.AccountOf(c), busName, p)
	})
	if errors.Is(err, bus.ErrNotFound) {
		return nil, &Error{Type: excNotFound, Message: "Event bus " + busName + " does not exist."}
	}
	if err != nil {
		return nil, err
	}
	if in.State != "" && in.State != string(archive.Enabled) {
		all = nil // every archive here is ENABLED
	}
	page, next, err := pageOf(prefixed(all, in.NamePrefix, func(v archive.View) string { return v.Name() }), in.NextToken, in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Archives  []Archive `json:"Archives"`
		NextToken string    `json:"NextToken,omitempty"`
	}{Archives: make([]Archive, 0, len(page)), NextToken: next}
	for _, v := range page {
		out.Archives = append(out.Archives, a.archiveOut(c, v))
	}
	return out, nil
}

type updateArchiveIn struct {
	ArchiveName      string
	Description      *string
	EventPattern     *string
	RetentionDays    *int
	KmsKeyIdentifier string
}

// updateArchive changes what the request gives: a new pattern applies to the events stored after the call, an
// empty one archives every event of the bus; a new retention applies to every event the archive holds.
func (a *api) updateArchive(c *gin.Context, in *updateArchiveIn) (any, error) {
	v, err := a.lookupArchive(c, in.ArchiveName)
	if err != nil {
		return nil, err
	}
	if in.KmsKeyIdentifier != "" {
		return nil, refuseUnsupported("KmsKeyIdentifier", "events are not encrypted with customer keys")
	}
	p := archive.Patch{Description: in.Description, RetentionDays: in.RetentionDays}
	if in.EventPattern != nil {
		if p.EventPattern, err = archivePattern(*in.EventPattern); err != nil {
			return nil, err
		}
		if p.EventPattern == nil {
			p.EventPattern = []byte("null") // no pattern: every event
		}
	}
	v, err = a.s.Archives.Update(c.Request.Context(), web.AccountOf(c), v.BusName, in.ArchiveName, p)
	if errors.Is(err, archive.ErrNotFound) || errors.Is(err, bus.ErrNotFound) {
		return nil, archiveNotFound(in.ArchiveName)
	}
	if err != nil {
		return nil, err
	}
	return a.archiveState(c, v), nil
}
