// Package awsevent maps between Amazon EventBridge's event shape and the CloudEvents this product stores: a PutEvents
// entry becomes a CloudEvent (FromEntry), a stored CloudEvent becomes the envelope AWS delivers to targets
// (Envelope), and an event pattern written for AWS's envelope becomes a pattern over the JSON form of a CloudEvent
// that domain/pattern matches (RewritePattern). It is pure: the standard library, domain packages and the
// CloudEvents data type.
//
// # The mapping
//
//	Amazon EventBridge                     CloudEvent stored                    back in Envelope
//	-------------------------------------  -----------------------------------  -------------------------------------
//	id (made by the caller)                id                                   id
//	Source / source                        source                               source
//	DetailType / detail-type               type                                 detail-type
//	Time / time (the call's time if none)  time, UTC, whole seconds             time, UTC, whole seconds
//	                                                                            ("2006-01-02T15:04:05Z"); the time of
//	                                                                            the call when the event has none
//	Detail / detail (a JSON object)        data, byte for byte;                 detail: see below
//	                                       datacontenttype application/json
//	account (the caller's)                 extension account (String)           account: the extension, else the
//	                                                                            argument
//	region (the caller's)                  extension region (String)            region: the extension, else the
//	                                                                            argument
//	Resources / resources                  extension resources (String): the    resources: the extension's array,
//	                                       compact JSON text of the array,      [] when it holds none
//	                                       none when the array is empty
//	TraceHeader                            extension traceparent, only when it  -
//	                                       is a W3C traceparent
//	version (always "0")                   -                                    version "0"
//	-                                      subject, dataschema, other           not delivered
//	                                       extensions
//
// Envelope writes detail from the event's data: data of no declared type or of a JSON type (*/json, */*+json) that
// is JSON as that JSON value; {} when there is no data; other data that is valid UTF-8 (text/* in practice) as a
// JSON string of its text; any other data (binary, or text that is not UTF-8) as {"data_base64": "<base64>"}. An
// event put through the CloudEvents APIs may so deliver a detail that is not an object, which AWS's PutEvents
// would not accept.
//
// # Patterns
//
// RewritePattern renames the top-level keys of AWS's envelope to the CloudEvents attributes above (detail-type to
// type, detail to data, also as the first segment of a dotted key: "detail.state" to "data.state"); source, id,
// time, account, region and resources keep their names. Every other top-level key is kept as written and matches
// the CloudEvents attribute or extension of that name ("subject", "datacontenttype", an extension), which AWS's
// envelope does not have. Keys below detail are the event's data and are never renamed. version is refused: no
// CloudEvent carries it. The router matches resources patterns against the extension's array
// (cloudevent.MatchView), so that, as in AWS, they match when one element does.
//
// Sources of the AWS behaviour above:
//   - the envelope and its fields: "Amazon EventBridge events" (version is 0 in all events; detail is a JSON
//     object, maybe {}), https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events-structure.html;
//   - the PutEvents entry: PutEventsRequestEntry of the EventBridge API reference (Detail "a valid JSON object";
//     without Time, the time of the PutEvents call; TraceHeader an AWS X-Ray header, X-Amzn-Trace-Id);
//   - the per-entry error codes and messages: LocalStack's EventBridge provider (localstack/localstack,
//     localstack-core/localstack/services/events/provider.py, validate_event), whose texts its tests recorded
//     against AWS (tests/aws/services/events/test_events.snapshot.json);
//   - arrays in patterns: "Arrays in Amazon EventBridge event patterns",
//     https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-arrays.html.
package awsevent

// Extensions of the CloudEvents stored for AWS events.
const (
	// ExtAccount is the extension holding the AWS account the event was put in (a String).
	ExtAccount = "account"
	// ExtRegion is the extension holding the AWS region the event was put in (a String).
	ExtRegion = "region"
	// ExtResources is the extension holding the event's resources: the compact JSON text of an array of strings
	// (a String, as CloudEvents extensions are scalars), e.g. ["arn:a","arn:b"].
	ExtResources = "resources"
	// extTraceParent is the CloudEvents distributed-tracing extension (W3C traceparent).
	extTraceParent = "traceparent"
)

// version is the envelope's version: "By default, this is set to 0 (zero) in all events" (eb-events-structure).
const version = "0"
