package rest

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/transform"
	"github.com/eventbridge-go/eventbridge/web"
)

// TestInputTransformerInput is an input transformer, in one of the forms a target accepts, and an event to try it
// on.
type TestInputTransformerInput struct {
	// InputTransformer, Input, InputPath and Transform are as in a Target: one of them, or attributes, is
	// required.
	InputTransformer *InputTransformer `json:"inputTransformer,omitempty"`
	// Input is constant JSON text that replaces the data.
	Input *string `json:"input,omitempty" example:"{\"status\": \"created\"}"`
	// InputPath is a JSON path selecting the part of the event that becomes the data.
	InputPath *string `json:"inputPath,omitempty" example:"$.data.order"`
	// Transform is an input transformer in Apache RocketMQ EventBridge's form.
	Transform *TransformParam `json:"transform,omitempty"`
	// Attributes sets CloudEvent attributes, as in a Target; it may be the only field set.
	Attributes map[string]string `json:"attributes,omitempty" example:"subject:orders/<id>,orderid:<id>"`
	// Event is a CloudEvent in its JSON form (structured mode), data included.
	Event json.RawMessage `json:"event" swaggertype:"object"`
} //@name TestInputTransformerInput

// TestInputTransformerOutput is what a target with the transformer would receive: the event's data and the
// attributes the transformer sets.
type TestInputTransformerOutput struct {
	// Output is the new data: a JSON value when contentType is JSON, else a string (null when the event has
	// none). With attributes alone it is the event's data as it is.
	Output json.RawMessage `json:"output" swaggertype:"object"`
	// ContentType is the event's new datacontenttype: application/json or text/plain; with attributes alone the
	// event's own (empty when it has none).
	ContentType string `json:"contentType" example:"application/json"`
	// Attributes holds the value of every attribute that attributes sets, as the event carries it: an empty
	// string for an attribute removed. Empty without attributes.
	Attributes map[string]string `json:"attributes" example:"subject:orders/o-1,orderid:o-1"`
} //@name TestInputTransformerOutput

// testInputTransformer applies an input transformer to an event without storing or delivering anything.
//
//	@Summary		Try an input transformer on an event
//	@Description	Answers the data a target with this input transformer would receive for the event, its content
//	@Description	type, and the attributes the transformer sets. The transformer is validated as a target's is: an
//	@Description	invalid one is a 400 naming its field (attributes.<name> for an attribute); an event the
//	@Description	transformer cannot be applied to (an empty type, ...) is a 400 on event.
//	@Tags			targets
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string						false	"account (default: the caller's own)"
//	@Param			body			body		TestInputTransformerInput	true	"one of inputTransformer, input, inputPath and transform, or attributes, and an event"
//	@Success		200				{object}	TestInputTransformerOutput
//	@Failure		400				{object}	web.Problem	"ValidationError (the transformer, naming its field), InvalidEvent, MalformedRequest"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/test-input-transformer [post]
func (a *api) testInputTransformer(c *gin.Context) {
	var in TestInputTransformerInput
	if err := web.DecodeJSON(c, &in); err != nil {
		a.writeError(c, err)
		return
	}
	t, err := transform.Compile(transformSpec(in.InputTransformer, in.Input, in.InputPath, in.Transform, in.Attributes))
	if err != nil {
		a.writeError(c, err)
		return
	}
	raw := bytes.TrimSpace(in.Event)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		a.writeError(c, domain.Invalid("event", "event is required: a CloudEvent in its JSON form"))
		return
	}
	e, err := web.DecodeStructured(raw)
	if err != nil {
		if de, ok := domain.As(err); ok && de.Field == "" {
			err = de.WithField("event")
		}
		a.writeError(c, err)
		return
	}
	out, err := t.Output(e)
	if err != nil {
		// The event's fault (data that is not the JSON it claims, an output too large), not the server's.
		a.writeError(c, domain.Invalid("event", "the transformer cannot be applied to this event: %s", err))
		return
	}
	res := TestInputTransformerOutput{Output: out.Data, ContentType: out.ContentType, Attributes: out.Attributes}
	if res.Attributes == nil {
		res.Attributes = map[string]string{}
	}
	switch {
	case out.Data == nil:
		res.Output = json.RawMessage("null")
	case !out.IsJSON():
		s, err := json.Marshal(string(out.Data))
		if err != nil {
			a.writeError(c, err)
			return
		}
		res.Output = s
	}
	c.PureJSON(http.StatusOK, res) // <, > and & as they are, not \u003c ...
}
