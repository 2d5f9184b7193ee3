package awsevent_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
)

func TestRewritePattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string // the rewritten pattern; "" when an error is expected
		err      string // part of the error
	}{
		{"envelope keys", `{"source":["s"],"detail-type":["t"],"detail":{"a":[1]},"id":["1"],"time":[{"prefix":"2017"}],` +
			`"account":["1"],"region":["r"],"resources":["arn"]}`,
			`{"source":["s"],"type":["t"],"data":{"a":[1]},"id":["1"],"time":[{"prefix":"2017"}],` +
				`"account":["1"],"region":["r"],"resources":["arn"]}`, ""},
		{"order kept", `{"detail":{"a":["x"]},"source":["s"],"detail-type":["t"]}`,
			`{"data":{"a":["x"]},"source":["s"],"type":["t"]}`, ""},
		{"keys below detail are data", `{"detail":{"detail-type":["y"],"detail":{"version":["0"]},"$or":[{"detail":["a"]},{"source":["b"]}]}}`,
			`{"data":{"detail-type":["y"],"detail":{"version":["0"]},"$or":[{"detail":["a"]},{"source":["b"]}]}}`, ""},
		{"values byte for byte, white space dropped", "{ \"detail\" : { \"x-limit\" : [ { \"numeric\" : [ \"=\", 3.018e2 ] } ],\n" +
			"\"s\": [\"\\u0041<&>\", 1.50, -0E0] } }",
			`{"data":{"x-limit":[{"numeric":["=",3.018e2]}],"s":["\u0041<&>",1.50,-0E0]}}`, ""},
		{"dotted keys", `{"detail.state":["x"],"detail-type.a":["y"],"source.b":["z"]}`,
			`{"data.state":["x"],"type.a":["y"],"source.b":["z"]}`, ""},
		{"escaped key names", `{"\u0064etail-type":["a"],"sub\u006aect":["b"]}`, `{"type":["a"],"sub\u006aect":["b"]}`, ""},
		{"other keys kept", `{"subject":["x"],"datacontenttype":["application/json"],"myext":[{"exists":true}]}`,
			`{"subject":["x"],"datacontenttype":["application/json"],"myext":[{"exists":true}]}`, ""},
		{"top-level $or", `{"$or":[{"source":["aws.cloudwatch"]},{"detail-type":["CloudWatch Alarm State Change"]}]}`,
			`{"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm State Change"]}]}`, ""},
		{"$or in $or", `{"source":["s"],"$or":[{"detail-type":["a"]},{"$or":[{"detail":{"b":["c"]}},{"detail.d":[1],"region":["r"]}]}]}`,
			`{"source":["s"],"$or":[{"type":["a"]},{"$or":[{"data":{"b":["c"]}},{"data.d":[1],"region":["r"]}]}]}`, ""},

		{"version", `{"source":["s"],"version":["0"]}`, "", `"version"`},
		{"version dotted", `{"version.x":["0"]}`, "", `"version.x"`},
		{"version in $or", `{"$or":[{"source":["s"]},{"version":["0"]}]}`, "", `"version"`},
		{"not JSON", `{"source":`, "", "not valid JSON"},
		{"empty", ``, "", "not valid JSON"},
		{"two values", `{} {}`, "", "not valid JSON"},
		{"an array", ` [{"source":["s"]}]`, "", "must be a JSON object, not an array"},
		{"a string", `"source"`, "", "not a string"},
		{"null", `null`, "", "not null"},
		{"a number", `12`, "", "not a number"},
		{"detail and data", `{"detail":{"a":[1]},"data":{"b":[2]}}`, "", `both "detail" and "data"`},
		{"detail-type and type across $or", `{"type":["a"],"$or":[{"detail-type":["b"]},{"source":["c"]}]}`, "", `both "detail-type" and "type"`},
		{"no field", `{}`, "", "at least one field"},
		{"a leaf that is no array", `{"detail-type":"x"}`, "", "detail-type: a pattern value must be"},
		{"$or that is no array", `{"$or":{"source":["s"]}}`, "", "$or takes an array"},
		{"$or with one object", `{"$or":[{"detail-type":["a"]}]}`, "", "$or takes an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := awsevent.RewritePattern([]byte(tt.in))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// TestRewritePatternCompileError: a pattern that does not compile comes back as the matcher's *pattern.Error, its
// path in the names the pattern used.
func TestRewritePatternCompileError(t *testing.T) {
	t.Parallel()
	for in, path := range map[string]string{
		`{"detail":{"n":[{"numeric":[">"]}]}}`:                         "detail.n[0].numeric",
		`{"detail-type":[{"prefix":1}]}`:                               "detail-type[0].prefix",
		`{"detail.a":[{"nope":1}]}`:                                    "detail.a[0].nope",
		`{"$or":[{"source":["s"]},{"detail":{"a":[{"nope":1}]}}]}`:     "$or[1].detail.a[0].nope",
		`{"type":[{"nope":1}]}`:                                        "type[0].nope",
		`{"source":[{"wildcard":"a**b"}],"detail-type":["t"]}`:         "source[0].wildcard",
		`{"$or":[{"source":["s"]},{"$or":[{"id":["1"]},{"data":1}]}]}`: "$or[1].$or[1].data",
	} {
		_, err := awsevent.RewritePattern([]byte(in))
		var pe *pattern.Error
		if assert.True(t, errors.As(err, &pe), "%s: %v", in, err) {
			assert.Equal(t, path, pe.Path, in)
		}
	}
}

// awsDocEvent is the CloudEvent stored for an entry, in the JSON form the router matches.
func awsDocEvent(t *testing.T, e awsevent.Entry) []byte {
	t.Helper()
	ev, err := awsevent.FromEntry(e, "6a7e8feb-b491-4cf7-a9f1-bf3703467718", "111122223333", "us-west-1",
		time.Date(2017, 12, 22, 18, 43, 48, 0, time.UTC))
	require.NoError(t, err)
	view, err := cloudevent.MatchView(ev)
	require.NoError(t, err)
	return view
}

// TestRewritePatternAWSExamples: the examples of Amazon's documentation, rewritten, match the CloudEvents stored
// for events they match in AWS, and not those they do not.
func TestRewritePatternAWSExamples(t *testing.T) {
	t.Parallel()
	ec2 := func(state string) awsevent.Entry {
		return awsevent.Entry{Source: "aws.ec2", DetailType: "EC2 Instance State-change Notification",
			Detail:    `{"instance-id": "i-1234567890abcdef0", "state": "` + state + `"}`,
			Resources: []string{"arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"}}
	}
	detail := func(d string) awsevent.Entry {
		return awsevent.Entry{Source: "test-source", DetailType: "test-detail-type", Detail: d}
	}
	at := func(s string) *time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return &tm
	}
	withTime := func(e awsevent.Entry, s string) awsevent.Entry { e.Time = at(s); return e }
	withResources := func(e awsevent.Entry, r ...string) awsevent.Entry { e.Resources = r; return e }
	typed := func(source, detailType string) awsevent.Entry {
		return awsevent.Entry{Source: source, DetailType: detailType, Detail: `{}`}
	}
	tests := []struct {
		name, source, pattern string // source: where the example is from
		match, noMatch        []awsevent.Entry
	}{
		{"source, detail-type and detail", "eb-event-patterns.html",
			`{"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"], "detail": {"state": ["terminated"]}}`,
			[]awsevent.Entry{ec2("terminated")},
			[]awsevent.Entry{ec2("running"), typed("aws.ec2", "EC2 Instance State-change Notification")}},
		{"prefix", "eb-event-patterns-content-based-filtering.html#eb-filtering-prefix-matching",
			`{"time": [{"prefix": "2017-10-02"}]}`,
			[]awsevent.Entry{withTime(ec2("x"), "2017-10-02T18:43:48Z")},
			[]awsevent.Entry{withTime(ec2("x"), "2017-10-03T00:00:00Z"), ec2("x")}},
		{"prefix ignoring case", "eb-event-patterns-content-based-filtering.html#eb-filtering-prefix-matching",
			`{"detail": {"service": [{"prefix": {"equals-ignore-case": "EventB"}}]}}`,
			[]awsevent.Entry{detail(`{"service":"eventbridge"}`), detail(`{"service":"EVENTBRIDGE"}`)},
			[]awsevent.Entry{detail(`{"service":"Event"}`)}},
		{"anything-but", "eb-event-patterns-content-based-filtering.html#eb-filtering-anything-but",
			`{"detail": {"state": [{"anything-but": "initializing"}]}}`,
			[]awsevent.Entry{detail(`{"state":"pending"}`)},
			[]awsevent.Entry{detail(`{"state":"initializing"}`), detail(`{}`)}},
		{"anything-but prefix", "eb-event-patterns-content-based-filtering.html#eb-filtering-anything-but",
			`{"detail": {"state": [{"anything-but": {"prefix": "init"}}]}}`,
			[]awsevent.Entry{detail(`{"state":"pending"}`)},
			[]awsevent.Entry{detail(`{"state":"initializing"}`)}},
		{"numeric", "eb-event-patterns-content-based-filtering.html#filtering-numeric-matching",
			`{"detail": {"c-count": [{"numeric": [">", 0, "<=", 5]}], "d-count": [{"numeric": ["<", 10]}], "x-limit": [{"numeric": ["=", 3.018e2]}]}}`,
			[]awsevent.Entry{detail(`{"c-count":5,"d-count":9,"x-limit":301.8}`), detail(`{"c-count":0.1,"d-count":-1e3,"x-limit":3.018e2}`)},
			[]awsevent.Entry{detail(`{"c-count":6,"d-count":9,"x-limit":301.8}`), detail(`{"c-count":5,"d-count":10,"x-limit":301.8}`),
				detail(`{"c-count":"5","d-count":9,"x-limit":301.8}`)}},
		{"exists", "eb-event-patterns-content-based-filtering.html#eb-filtering-exists-matching",
			`{"detail": {"state": [{"exists": true}]}}`,
			[]awsevent.Entry{detail(`{"state":"x"}`), detail(`{"state":null}`)},
			[]awsevent.Entry{detail(`{"other":"x"}`), detail(`{"state":{"a":1}}`)}},
		{"exists false", "eb-event-patterns-content-based-filtering.html#eb-filtering-exists-matching",
			`{"detail": {"state": [{"exists": false}]}}`,
			[]awsevent.Entry{detail(`{"other":"x"}`)},
			[]awsevent.Entry{detail(`{"state":"x"}`)}},
		{"$or with detail-type", "event-ruler README, $or (its Parallel Or at the top level)",
			`{"$or": [{"source": ["aws.cloudwatch"]}, {"detail-type": ["CloudWatch Alarm State Change"]}]}`,
			[]awsevent.Entry{typed("aws.cloudwatch", "x"), typed("y", "CloudWatch Alarm State Change")},
			[]awsevent.Entry{typed("y", "x"), typed("y", "CloudWatch Alarm")}},
		{"$or in detail", "eb-event-patterns-content-based-filtering.html#eb-filtering-complex-example-or",
			`{"detail": {"$or": [{"c-count": [{"numeric": [">", 0, "<=", 5]}]}, {"d-count": [{"numeric": ["<", 10]}]}, {"x-limit": [{"numeric": ["=", 3.018e2]}]}]}}`,
			[]awsevent.Entry{detail(`{"c-count":0,"d-count":0,"x-limit":9.018e2}`)},
			[]awsevent.Entry{detail(`{"c-count":0,"d-count":10,"x-limit":9.018e2}`)}},
		{"wildcard", "eb-event-patterns-content-based-filtering.html#eb-filtering-wildcard-matching",
			`{"detail": {"EventBusArn": [{"wildcard": "arn:aws:events:us-east-1:*:event-bus/*"}]}}`,
			[]awsevent.Entry{detail(`{"EventBusArn":"arn:aws:events:us-east-1:123456789012:event-bus/myEventBus"}`)},
			[]awsevent.Entry{detail(`{"EventBusArn":"arn:aws:events:us-west-2:123456789012:event-bus/myEventBus"}`)}},
		{"resources: one element of the event's array", "eb-event-patterns-arrays.html",
			`{"resources": ["arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f", "arn:aws:ec2:us-east-1:111122223333:instance/i-b188560f", "arn:aws:ec2:us-east-1:444455556666:instance/i-b188560f"]}`,
			[]awsevent.Entry{withResources(ec2("x"),
				"arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:eb56d16b-bbf0-401d-b893-d5978ed4a025:autoScalingGroupName/ASGTerminate",
				"arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f")},
			[]awsevent.Entry{ec2("x"), withResources(ec2("x"))}},
		{"account and region", "eb-events-structure.html (fields of every event)",
			`{"account": ["111122223333"], "region": [{"prefix": "us-"}], "id": [{"exists": true}]}`,
			[]awsevent.Entry{ec2("x")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rewritten, err := awsevent.RewritePattern([]byte(tt.pattern))
			require.NoError(t, err, tt.source)
			p, err := pattern.Compile(rewritten)
			require.NoError(t, err)
			for _, e := range tt.match {
				view := awsDocEvent(t, e)
				ok, err := p.Match(view)
				require.NoError(t, err)
				assert.True(t, ok, "%s should match %s", rewritten, view)
			}
			for _, e := range tt.noMatch {
				view := awsDocEvent(t, e)
				ok, err := p.Match(view)
				require.NoError(t, err)
				assert.False(t, ok, "%s should not match %s", rewritten, view)
			}
		})
	}
}
