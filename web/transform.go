package web

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/transform"
)

// TestInputTransformerInput is an input transformer, in one of the forms a target accepts, and an event to try it
// on.
type TestInputTransformerInput struct {
	// InputTransformer, Input, InputPath and Transform are as in a Target: exactly one of them is required.
	InputTransformer *InputTransformer `json:"inputTransformer,omitempty"`
	// Input is constant JSON text that replaces the data.
	Input *string `json:"input,omitempty" example:"{\"status\": \"created\"}"`
	// InputPath is a JSON path selecting the part of the event that becomes the data.
	InputPath *string `json:"inputPath,omitempty" example:"$.data.order"`
	// Transform is an input transformer in Apache RocketMQ EventBridge's form.
	Transform *TransformParam `json:"transform,omitempty"`
	// Event is a CloudEvent in its JSON form (structured mode), data included.
	Event json.RawMessage `json:"event" swaggertype:"object"`
} //@name TestInputTransformerInput

// TestInputTransformerOutput is what a target with the transformer would receive as the event's data.
type TestInputTransformerOutput struct {
	// Output is the new data: a JSON value when contentType is application/json, else a string.
	Output json.RawMessage `json:"output" swaggertype:"object"`
	// ContentType is the event's new datacontenttype: application/json or text/plain.
	ContentType string `json:"contentType" enums:"application/json,text/plain" example:"application/json"`
} //@name TestInputTransformerOutput

// testInputTransformer applies an input transformer to an event without storing or delivering anything.
//
//	@Summary		Try an input transformer on an event
//	@Description	Answers the data a target with this input transformer would receive for the event, and its content
//	@Description	type. The transformer is validated as a target's is: an invalid one is a 400 naming its field.
//	@Tags			targets
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string						false	"account (default: default)"
//	@Param			body			body		TestInputTransformerInput	true	"one of inputTransformer, input, inputPath and transform, and an event"
//	@Success		200				{object}	TestInputTransformerOutput
//	@Failure		400				{object}	Problem	"ValidationError (the transformer, naming its field), InvalidEvent, MalformedRequest"
//	@Router			/api/v1/test-input-transformer [post]
func (a *api) testInputTransformer(c *gin.Context) {
	var in TestInputTransformerInput
	if err := decodeJSON(c, &in); err != nil {
		a.writeError(c, err)
		return
	}
	t, err := transform.Compile(transformSpec(in.InputTransformer, in.Input, in.InputPath, in.Transform))
	if err != nil {
		a.writeError(c, err)
		return
	}
	raw := bytes.TrimSpace(in.Event)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		a.writeError(c, domain.Invalid("event", "event is required: a CloudEvent in its JSON form"))
		return
	}
	e, err := decodeStructured(raw)
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
	res := TestInputTransformerOutput{Output: out.Data, ContentType: out.ContentType}
	if !out.IsJSON() {
		s, err := json.Marshal(string(out.Data))
		if err != nil {
			a.writeError(c, err)
			return
		}
		res.Output = s
	}
	c.PureJSON(http.StatusOK, res) // <, > and & as they are, not \u003c ...
}
