package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/web"
)

// APIDestination is an HTTP endpoint that targets deliver to, called with the authorization of a connection.
type APIDestination struct {
	// Name may be absent in a PUT, which takes it from the path; when present it must equal the path's.
	Name        string `json:"name" example:"create-order"`
	Description string `json:"description" example:"creates orders in the shop"`
	// Connection is the name of a connection of the same account.
	Connection string `json:"connection" example:"shop-api"`
	// InvocationEndpoint is an absolute http or https URL; each path segment "*" (at most 10) is a path
	// parameter, filled from the event at delivery.
	InvocationEndpoint string `json:"invocationEndpoint" example:"https://api.example.com/orders/*"`
	HTTPMethod         string `json:"httpMethod" enums:"GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS" example:"POST"`
	// InvocationRateLimitPerSecond is between 1 and 300 (default 300).
	InvocationRateLimitPerSecond *int      `json:"invocationRateLimitPerSecond,omitempty" example:"300"`
	CreatedAt                    time.Time `json:"createdAt" readonly:"true"`
	UpdatedAt                    time.Time `json:"updatedAt" readonly:"true"`
} //@name ApiDestination

// APIDestinationList is one page of API destinations.
type APIDestinationList struct {
	APIDestinations []APIDestination `json:"apiDestinations"`
	// NextToken asks for the next page; absent on the last page.
	NextToken string `json:"nextToken,omitempty"`
} //@name ApiDestinationList

// APIDestinationPatch changes an API destination: the fields given are replaced, the others kept.
type APIDestinationPatch struct {
	Description                  *string `json:"description,omitempty"`
	Connection                   *string `json:"connection,omitempty" example:"shop-api"`
	InvocationEndpoint           *string `json:"invocationEndpoint,omitempty" example:"https://api.example.com/orders/*"`
	HTTPMethod                   *string `json:"httpMethod,omitempty" enums:"GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS"`
	InvocationRateLimitPerSecond *int    `json:"invocationRateLimitPerSecond,omitempty" example:"100"`
} //@name ApiDestinationPatch

func (in APIDestination) spec() (apidestination.Spec, error) {
	s := apidestination.Spec{Name: in.Name, Description: in.Description, Connection: in.Connection,
		InvocationEndpoint: in.InvocationEndpoint, HTTPMethod: in.HTTPMethod}
	if in.InvocationRateLimitPerSecond != nil {
		if *in.InvocationRateLimitPerSecond == 0 {
			return s, domain.Invalid("invocationRateLimitPerSecond", "invocationRateLimitPerSecond must be between 1 and %d",
				apidestination.MaxRateLimitPerSecond)
		}
		s.InvocationRateLimitPerSecond = *in.InvocationRateLimitPerSecond
	}
	return s, nil
}

func apiDestinationOf(d *apidestination.APIDestination) APIDestination {
	rate := d.InvocationRateLimitPerSecond()
	return APIDestination{Name: d.Name(), Description: d.Description(), Connection: d.Connection().Name,
		InvocationEndpoint: d.InvocationEndpoint(), HTTPMethod: d.HTTPMethod(), InvocationRateLimitPerSecond: &rate,
		CreatedAt: d.CreatedAt(), UpdatedAt: d.UpdatedAt()}
}

// listAPIDestinations answers a page of the account's API destinations, ordered by name.
//
//	@Summary	List API destinations
//	@Tags		api-destinations
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		limit			query		int		false	"page size (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success	200				{object}	APIDestinationList
//	@Failure	400				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/api-destinations [get]
func (a *api) listAPIDestinations(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	ds, next, err := a.s.APIDestinations.List(c.Request.Context(), web.AccountOf(c), page)
	if err != nil {
		return 0, nil, err
	}
	out := APIDestinationList{APIDestinations: make([]APIDestination, 0, len(ds)), NextToken: next}
	for _, d := range ds {
		out.APIDestinations = append(out.APIDestinations, apiDestinationOf(d))
	}
	return http.StatusOK, out, nil
}

// createAPIDestination creates an API destination.
//
//	@Summary	Create an API destination
//	@Tags		api-destinations
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string			false	"account (default: the caller's own)"
//	@Param		destination		body		APIDestination	true	"the API destination"
//	@Success	201				{object}	APIDestination
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"ConnectionNotFound: the connection named does not exist"
//	@Failure	409				{object}	web.Problem	"ApiDestinationAlreadyExists, ApiDestinationQuotaExceeded"
//	@Failure	413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/api-destinations [post]
func (a *api) createAPIDestination(c *gin.Context, in *APIDestination) (int, any, error) {
	spec, err := in.spec()
	if err != nil {
		return 0, nil, err
	}
	d, err := a.s.APIDestinations.Create(c.Request.Context(), web.AccountOf(c), spec)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, apiDestinationOf(d), nil
}

// getAPIDestination answers one API destination.
//
//	@Summary	Get an API destination
//	@Tags		api-destinations
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		destination		path		string	true	"API destination name"
//	@Success	200				{object}	APIDestination
//	@Failure	404				{object}	web.Problem	"ApiDestinationNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/api-destinations/{destination} [get]
func (a *api) getAPIDestination(c *gin.Context) (int, any, error) {
	d, err := a.s.APIDestinations.Get(c.Request.Context(), web.AccountOf(c), c.Param("destination"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiDestinationOf(d), nil
}

// putAPIDestination creates the API destination (201) or replaces it (200).
//
//	@Summary	Create or replace an API destination
//	@Tags		api-destinations
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string			false	"account (default: the caller's own)"
//	@Param		destination		path		string			true	"API destination name"
//	@Param		body			body		APIDestination	true	"the API destination; its name may be absent"
//	@Success	200				{object}	APIDestination	"replaced"
//	@Success	201				{object}	APIDestination	"created"
//	@Failure	400				{object}	web.Problem			"invalid input (ValidationError, MalformedRequest)"
//	@Failure	404				{object}	web.Problem			"ConnectionNotFound"
//	@Failure	409				{object}	web.Problem			"ApiDestinationQuotaExceeded"
//	@Failure	413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/api-destinations/{destination} [put]
func (a *api) putAPIDestination(c *gin.Context, in *APIDestination) (int, any, error) {
	name := c.Param("destination")
	if in.Name != "" && in.Name != name {
		return 0, nil, domain.Invalid("name", "name %q differs from the API destination %q of the path; API destinations cannot be renamed", in.Name, name)
	}
	in.Name = name
	spec, err := in.spec()
	if err != nil {
		return 0, nil, err
	}
	d, created, err := a.s.APIDestinations.Put(c.Request.Context(), web.AccountOf(c), spec)
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, apiDestinationOf(d), nil
}

// patchAPIDestination changes the fields of an API destination that the body gives.
//
//	@Summary	Change an API destination
//	@Tags		api-destinations
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string				false	"account (default: the caller's own)"
//	@Param		destination		path		string				true	"API destination name"
//	@Param		patch			body		APIDestinationPatch	true	"the fields to change"
//	@Success	200				{object}	APIDestination
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"ApiDestinationNotFound, ConnectionNotFound"
//	@Failure	413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/api-destinations/{destination} [patch]
func (a *api) patchAPIDestination(c *gin.Context, in *APIDestinationPatch) (int, any, error) {
	d, err := a.s.APIDestinations.Patch(c.Request.Context(), web.AccountOf(c), c.Param("destination"), apidestination.Patch{
		Description: in.Description, Connection: in.Connection, InvocationEndpoint: in.InvocationEndpoint,
		HTTPMethod: in.HTTPMethod, InvocationRateLimitPerSecond: in.InvocationRateLimitPerSecond,
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiDestinationOf(d), nil
}

// deleteAPIDestination deletes an API destination that no target uses.
//
//	@Summary	Delete an API destination
//	@Tags		api-destinations
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		destination		path	string	true	"API destination name"
//	@Success	204
//	@Failure	404	{object}	web.Problem	"ApiDestinationNotFound"
//	@Failure	409	{object}	web.Problem	"ApiDestinationInUse: targets use it (named in the detail as bus/rule/target)"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/api-destinations/{destination} [delete]
func (a *api) deleteAPIDestination(c *gin.Context) (int, any, error) {
	if err := a.s.APIDestinations.Delete(c.Request.Context(), web.AccountOf(c), c.Param("destination")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
