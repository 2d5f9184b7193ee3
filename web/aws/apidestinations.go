package aws

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/web"
)

// API destinations are the API destinations of /api/v1 (domain/apidestination): an endpoint called through a
// connection of the account at a bounded rate. They are always ACTIVE. Their ARN,
// arn:aws:events:<region>:<account>:api-destination/<name>/<id>, is also the ARN of the targets that deliver to
// them (apiDestinationARN).

// destStateActive is the state of every API destination here.
const destStateActive = "ACTIVE"

// APIDestination is an API destination as DescribeApiDestination and ListApiDestinations answer it.
type APIDestination struct {
	Name                         string `json:"Name"`
	APIDestinationArn            string `json:"ApiDestinationArn"`
	APIDestinationState          string `json:"ApiDestinationState"`
	ConnectionArn                string `json:"ConnectionArn"`
	Description                  string `json:"Description,omitempty"`
	InvocationEndpoint           string `json:"InvocationEndpoint"`
	HTTPMethod                   string `json:"HttpMethod"`
	InvocationRateLimitPerSecond int    `json:"InvocationRateLimitPerSecond"`
	CreationTime                 epoch  `json:"CreationTime"`
	LastModifiedTime             epoch  `json:"LastModifiedTime"`
}

// apiDestinationARNOf is the ARN of the API destination d of the request's account.
func (a *api) apiDestinationARNOf(c *gin.Context, d *apidestination.APIDestination) string {
	return a.arnOf(c, kindAPIDestination+"/"+d.Name()+"/"+d.ID())
}

const destinationARNsKey = "eventbridge.aws.apiDestinationARNs"

// apiDestinationARN is the ARN of the account's API destination of that name, as DescribeApiDestination answers it:
// the ARN that the targets delivering to it answer too (targetARN). It reads the destination once per request;
// when it cannot (it is gone), the ARN has no id.
func (a *api) apiDestinationARN(c *gin.Context, name string) string {
	known, _ := c.Get(destinationARNsKey)
	arns, _ := known.(map[string]string)
	if v, ok := arns[name]; ok {
		return v
	}
	v := a.arnOf(c, kindAPIDestination+"/"+name)
	if d, err := a.s.APIDestinations.Get(c.Request.Context(), web.AccountOf(c), name); err == nil {
		v = a.apiDestinationARNOf(c, d)
	}
	if arns == nil {
		arns = map[string]string{}
		c.Set(destinationARNsKey, arns)
	}
	arns[name] = v
	return v
}

func (a *api) apiDestinationOut(c *gin.Context, d *apidestination.APIDestination) APIDestination {
	conn := d.Connection()
	return APIDestination{Name: d.Name(), APIDestinationArn: a.apiDestinationARNOf(c, d), APIDestinationState: destStateActive,
		ConnectionArn: a.connectionARN(c, conn.Name, conn.ID), Description: d.Description(), InvocationEndpoint: d.InvocationEndpoint(),
		HTTPMethod: d.HTTPMethod(), InvocationRateLimitPerSecond: d.InvocationRateLimitPerSecond(),
		CreationTime: epoch(d.CreatedAt()), LastModifiedTime: epoch(d.UpdatedAt())}
}

// apiDestinationStateOut is the answer of CreateApiDestination and UpdateApiDestination.
type apiDestinationStateOut struct {
	APIDestinationArn   string `json:"ApiDestinationArn"`
	APIDestinationState string `json:"ApiDestinationState"`
	CreationTime        epoch  `json:"CreationTime"`
	LastModifiedTime    epoch  `json:"LastModifiedTime"`
}

func (a *api) apiDestinationState(c *gin.Context, d *apidestination.APIDestination) apiDestinationStateOut {
	return apiDestinationStateOut{APIDestinationArn: a.apiDestinationARNOf(c, d), APIDestinationState: destStateActive,
		CreationTime: epoch(d.CreatedAt()), LastModifiedTime: epoch(d.UpdatedAt())}
}

func apiDestinationNotFound(name string) error {
	return &Error{Type: excNotFound, Message: "Failed to describe the api-destination(s). An api-destination '" + name +
		"' does not exist."}
}

type createAPIDestinationIn struct {
	Name                         string
	Description                  string
	ConnectionArn                string
	InvocationEndpoint           string
	HTTPMethod                   string `json:"HttpMethod"`
	InvocationRateLimitPerSecond int
}

// createAPIDestination creates an API destination on a connection of the account. The endpoint may be http as
// well as https (AWS takes https only).
func (a *api) createAPIDestination(c *gin.Context, in *createAPIDestinationIn) (any, error) {
	if err := checkName("Name", in.Name); err != nil {
		return nil, err
	}
	conn, err := a.lookupConnection(c, "ConnectionArn", in.ConnectionArn)
	if err != nil {
		return nil, err
	}
	d, err := a.s.APIDestinations.Create(c.Request.Context(), web.AccountOf(c), apidestination.Spec{Name: in.Name,
		Description: in.Description, Connection: conn.Name(), InvocationEndpoint: in.InvocationEndpoint, HTTPMethod: in.HTTPMethod,
		InvocationRateLimitPerSecond: in.InvocationRateLimitPerSecond})
	if errors.Is(err, apidestination.ErrAlreadyExists) {
		return nil, &Error{Type: excAlreadyExists, Message: "An api-destination '" + in.Name + "' already exists."}
	}
	if err != nil {
		return nil, err
	}
	return a.apiDestinationState(c, d), nil
}

type apiDestinationNameIn struct{ Name string }

func (a *api) lookupAPIDestination(c *gin.Context, name string) (*apidestination.APIDestination, error) {
	if err := checkName("Name", name); err != nil {
		return nil, err
	}
	d, err := a.s.APIDestinations.Get(c.Request.Context(), web.AccountOf(c), name)
	if errors.Is(err, apidestination.ErrNotFound) {
		return nil, apiDestinationNotFound(name)
	}
	return d, err
}

func (a *api) describeAPIDestination(c *gin.Context, in *apiDestinationNameIn) (any, error) {
	d, err := a.lookupAPIDestination(c, in.Name)
	if err != nil {
		return nil, err
	}
	return a.apiDestinationOut(c, d), nil
}

// deleteAPIDestination deletes an API destination that no target delivers to (AWS deletes one in use: here remove
// or change its targets first).
func (a *api) deleteAPIDestination(c *gin.Context, in *apiDestinationNameIn) (any, error) {
	if err := checkName("Name", in.Name); err != nil {
		return nil, err
	}
	err := a.s.APIDestinations.Delete(c.Request.Context(), web.AccountOf(c), in.Name)
	if errors.Is(err, apidestination.ErrNotFound) {
		return nil, apiDestinationNotFound(in.Name)
	}
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

type listAPIDestinationsIn struct {
	NamePrefix    string
	ConnectionArn string
	NextToken     string
	Limit         *int
}

func (a *api) listAPIDestinations(c *gin.Context, in *listAPIDestinationsIn) (any, error) {
	connID := ""
	if in.ConnectionArn != "" {
		conn, err := a.lookupConnection(c, "ConnectionArn", in.ConnectionArn)
		if err != nil {
			return nil, err
		}
		connID = conn.ID()
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*apidestination.APIDestination, string, error) {
		return a.s.APIDestinations.List(ctx, web.AccountOf(c), p)
	})
	if err != nil {
		return nil, err
	}
	if connID != "" {
		kept := all[:0]
		for _, d := range all {
			if d.Connection().ID == connID {
				kept = append(kept, d)
			}
		}
		all = kept
	}
	page, next, err := pageOf(prefixed(all, in.NamePrefix, (*apidestination.APIDestination).Name), in.NextToken, in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		APIDestinations []APIDestination `json:"ApiDestinations"`
		NextToken       string           `json:"NextToken,omitempty"`
	}{APIDestinations: make([]APIDestination, 0, len(page)), NextToken: next}
	for _, d := range page {
		v := a.apiDestinationOut(c, d)
		v.Description = "" // not a member of AWS's list entries
		out.APIDestinations = append(out.APIDestinations, v)
	}
	return out, nil
}

type updateAPIDestinationIn struct {
	Name                         string
	Description                  *string
	ConnectionArn                string
	InvocationEndpoint           *string
	HTTPMethod                   *string `json:"HttpMethod"`
	InvocationRateLimitPerSecond *int
}

// updateAPIDestination changes what the request gives and keeps the rest.
func (a *api) updateAPIDestination(c *gin.Context, in *updateAPIDestinationIn) (any, error) {
	if _, err := a.lookupAPIDestination(c, in.Name); err != nil {
		return nil, err
	}
	p := apidestination.Patch{Description: in.Description, InvocationEndpoint: in.InvocationEndpoint, HTTPMethod: in.HTTPMethod,
		InvocationRateLimitPerSecond: in.InvocationRateLimitPerSecond}
	if in.ConnectionArn != "" {
		conn, err := a.lookupConnection(c, "ConnectionArn", in.ConnectionArn)
		if err != nil {
			return nil, err
		}
		name := conn.Name()
		p.Connection = &name
	}
	d, err := a.s.APIDestinations.Patch(c.Request.Context(), web.AccountOf(c), in.Name, p)
	if errors.Is(err, apidestination.ErrNotFound) {
		return nil, apiDestinationNotFound(in.Name)
	}
	if err != nil {
		return nil, err
	}
	return a.apiDestinationState(c, d), nil
}
