package rest

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/web"
)

// Archive keeps the events of a bus that match its pattern, from its creation on, for retentionDays days (0:
// indefinitely, within the account's storage quota), so that they can be replayed.
type Archive struct {
	Name        string `json:"name" example:"orders-2026"`
	Description string `json:"description" example:"every order"`
	// EventPattern selects the events archived (a JSON object, or a string holding one); absent or null: every
	// event of the bus.
	EventPattern json.RawMessage `json:"eventPattern,omitempty" swaggertype:"object"`
	// RetentionDays is how long events are kept, in days; 0 (default) keeps them indefinitely.
	RetentionDays int `json:"retentionDays" example:"30"`
	// State is ENABLED: the bus's router archives what matches.
	State string `json:"state" enums:"ENABLED" readonly:"true"`
	// Bus is the archive's bus.
	Bus string `json:"bus" readonly:"true"`
	// EventCount and SizeBytes are what the archive holds now.
	EventCount uint64    `json:"eventCount" readonly:"true"`
	SizeBytes  uint64    `json:"sizeBytes" readonly:"true"`
	CreatedAt  time.Time `json:"createdAt" readonly:"true"`
	UpdatedAt  time.Time `json:"updatedAt" readonly:"true"`
} //@name Archive

// ArchivePatch changes an archive: the fields given are replaced, the others kept.
type ArchivePatch struct {
	Description *string `json:"description,omitempty"`
	// EventPattern replaces the pattern for the events stored from then on; null archives every event.
	EventPattern  json.RawMessage `json:"eventPattern,omitempty" swaggertype:"object"`
	RetentionDays *int            `json:"retentionDays,omitempty"`
} //@name ArchivePatch

// ArchiveList is one page of archives.
type ArchiveList struct {
	Archives  []Archive `json:"archives"`
	NextToken string    `json:"nextToken,omitempty"`
} //@name ArchiveList

func (a Archive) auditKey() string { return a.Name }

func archiveOf(v archive.View) Archive {
	return Archive{Name: v.Name(), Description: v.Description(), EventPattern: json.RawMessage(v.EventPattern()),
		RetentionDays: v.RetentionDays(), State: string(v.State()), Bus: v.BusName, EventCount: v.Stats.Events,
		SizeBytes: v.Stats.Bytes, CreatedAt: v.CreatedAt(), UpdatedAt: v.UpdatedAt()}
}

// listArchives answers a page of a bus's archives, ordered by name.
//
//	@Summary	List the archives of a bus
//	@Tags		archives
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success	200				{object}	ArchiveList
//	@Failure	400				{object}	web.Problem
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/archives [get]
func (a *api) listArchives(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	vs, next, err := a.s.Archives.List(c.Request.Context(), web.AccountOf(c), c.Param("bus"), page)
	if err != nil {
		return 0, nil, err
	}
	out := ArchiveList{Archives: make([]Archive, 0, len(vs)), NextToken: next}
	for _, v := range vs {
		out.Archives = append(out.Archives, archiveOf(v))
	}
	return http.StatusOK, out, nil
}

// createArchive creates an archive of a bus; it answers once the bus's router archives: every matching event
// stored from then on is archived, none before.
//
//	@Summary	Create an archive
//	@Tags		archives
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		archive			body		Archive	true	"the archive (name, description, eventPattern, retentionDays)"
//	@Success	201				{object}	Archive
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, InvalidEventPattern, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	409				{object}	web.Problem	"ArchiveAlreadyExists (names are unique per account), ArchiveQuotaExceeded, InsufficientStorage"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/archives [post]
func (a *api) createArchive(c *gin.Context, in *Archive) (int, any, error) {
	p, err := unwrapPattern(in.EventPattern)
	if err != nil {
		return 0, nil, err
	}
	v, err := a.s.Archives.Create(c.Request.Context(), web.AccountOf(c), c.Param("bus"), archive.Spec{
		Name: in.Name, Description: in.Description, EventPattern: p, RetentionDays: in.RetentionDays})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, archiveOf(v), nil
}

// getArchive answers an archive with what it holds.
//
//	@Summary	Get an archive
//	@Tags		archives
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		archive			path		string	true	"archive name"
//	@Success	200				{object}	Archive
//	@Failure	404				{object}	web.Problem	"BusNotFound, ArchiveNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/archives/{archive} [get]
func (a *api) getArchive(c *gin.Context) (int, any, error) {
	v, err := a.s.Archives.Get(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("archive"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, archiveOf(v), nil
}

// patchArchive changes an archive's description, pattern or retention.
//
//	@Summary	Change an archive
//	@Tags		archives
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string			false	"account (default: the caller's own)"
//	@Param		bus				path		string			true	"bus name"
//	@Param		archive			path		string			true	"archive name"
//	@Param		patch			body		ArchivePatch	true	"the fields to change"
//	@Success	200				{object}	Archive
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, InvalidEventPattern, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"BusNotFound, ArchiveNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/archives/{archive} [patch]
func (a *api) patchArchive(c *gin.Context, in *ArchivePatch) (int, any, error) {
	p := archive.Patch{Description: in.Description, RetentionDays: in.RetentionDays}
	if in.EventPattern != nil {
		pattern, err := unwrapPattern(in.EventPattern)
		if err != nil {
			return 0, nil, err
		}
		if pattern == nil {
			pattern = []byte("null") // remove the pattern: every event
		}
		p.EventPattern = pattern
	}
	v, err := a.s.Archives.Update(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("archive"), p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, archiveOf(v), nil
}

// deleteArchive deletes an archive and every event it holds.
//
//	@Summary	Delete an archive
//	@Tags		archives
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		bus				path	string	true	"bus name"
//	@Param		archive			path	string	true	"archive name"
//	@Success	204
//	@Failure	404	{object}	web.Problem	"BusNotFound, ArchiveNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/archives/{archive} [delete]
func (a *api) deleteArchive(c *gin.Context) (int, any, error) {
	if err := a.s.Archives.Delete(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("archive")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
