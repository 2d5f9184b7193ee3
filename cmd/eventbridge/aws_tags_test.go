package main

import (
	"context"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAWSAPITags: TagResource, UntagResource and ListTagsForResource on a bus, a rule and a connection by their
// ARNs, tags given at creation (CreateEventBus, PutRule), AWS's limits, and ARNs that name nothing of the account.
func TestAWSAPITags(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m).newAccount("awstags")
	eb := awsClient(m, a.newAWSKey("sdk", "admin"), "us-east-1")
	ctx := context.Background()
	tags := func(arn string) map[string]string {
		t.Helper()
		out, err := eb.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: awssdk.String(arn)})
		require.NoError(t, err)
		got := map[string]string{}
		for _, tg := range out.Tags {
			got[awssdk.ToString(tg.Key)] = awssdk.ToString(tg.Value)
		}
		return got
	}
	tag := func(k, v string) types.Tag { return types.Tag{Key: awssdk.String(k), Value: awssdk.String(v)} }

	bus, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String("org.tagged/bus"),
		Tags: []types.Tag{tag("team", "shop"), tag("env", "")}})
	require.NoError(t, err)
	busARN := awssdk.ToString(bus.EventBusArn)
	assert.Equal(t, map[string]string{"team": "shop", "env": ""}, tags(busARN))

	rule, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("r.1"), EventBusName: bus.EventBusArn,
		EventPattern: awssdk.String(`{"source": ["x"]}`), Tags: []types.Tag{tag("owner", "me")}})
	require.NoError(t, err)
	ruleARN := awssdk.ToString(rule.RuleArn)
	assert.Equal(t, map[string]string{"owner": "me"}, tags(ruleARN))

	_, err = eb.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: &busARN, Tags: []types.Tag{tag("team", "orders"), tag("cost", "42")}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "orders", "env": "", "cost": "42"}, tags(busARN), "added and replaced")
	_, err = eb.UntagResource(ctx, &eventbridge.UntagResourceInput{ResourceARN: &busARN, TagKeys: []string{"env", "absent"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "orders", "cost": "42"}, tags(busARN))
	assert.Equal(t, map[string]string{"owner": "me"}, tags(ruleARN), "each resource has its own")

	conn, err := eb.CreateConnection(ctx, &eventbridge.CreateConnectionInput{Name: awssdk.String("c"),
		AuthorizationType: types.ConnectionAuthorizationTypeApiKey, AuthParameters: &types.CreateConnectionAuthRequestParameters{
			ApiKeyAuthParameters: &types.CreateConnectionApiKeyAuthRequestParameters{ApiKeyName: awssdk.String("X-Api-Key"), ApiKeyValue: awssdk.String("k")}}})
	require.NoError(t, err)
	_, err = eb.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: conn.ConnectionArn, Tags: []types.Tag{tag("k", "v")}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "v"}, tags(awssdk.ToString(conn.ConnectionArn)))

	var many []types.Tag
	for i := range 49 {
		many = append(many, tag("k"+strings.Repeat("x", i), "v"))
	}
	_, err = eb.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: &busARN, Tags: many})
	assert.Equal(t, "LimitExceededException", apiErrorCode(err), "more than 50 on one resource")
	_, err = eb.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: &busARN, Tags: []types.Tag{tag("aws:reserved", "v")}})
	assert.Equal(t, "ValidationException", apiErrorCode(err))
	_, err = eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String("bad-tags"), Tags: []types.Tag{tag("", "v")}})
	assert.Equal(t, "ValidationException", apiErrorCode(err))
	_, err = eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: awssdk.String("bad-tags")})
	assert.Equal(t, "ResourceNotFoundException", apiErrorCode(err), "a creation with bad tags creates nothing")

	for _, arn := range []string{
		strings.Replace(busARN, "org.tagged", "org.other", 1),            // no such bus
		"arn:aws:events:us-east-1:111111111111:event-bus/org.tagged/bus", // another account
		strings.Replace(ruleARN, "r.1", "r.2", 1),
	} {
		_, err := eb.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: awssdk.String(arn)})
		assert.Equal(t, "ResourceNotFoundException", apiErrorCode(err), arn)
	}
	_, err = eb.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: awssdk.String("arn:aws:sqs:us-east-1:1:q")})
	assert.Equal(t, "ValidationException", apiErrorCode(err))
}

// TestAWSAPIRefusedOperations: the operations with no counterpart here (resource policies, partner event sources,
// global endpoints) answer UnknownOperationException naming the operation, never a silent success.
func TestAWSAPIRefusedOperations(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	eb := awsClient(m, apiOf(t, m).newAccount("refused").newAWSKey("sdk", "admin"), "us-east-1")
	ctx := context.Background()
	calls := map[string]func() error{
		"PutPermission": func() error {
			_, err := eb.PutPermission(ctx, &eventbridge.PutPermissionInput{Policy: awssdk.String(`{}`)})
			return err
		},
		"CreatePartnerEventSource": func() error {
			_, err := eb.CreatePartnerEventSource(ctx, &eventbridge.CreatePartnerEventSourceInput{Name: awssdk.String("aws.partner/x"),
				Account: awssdk.String("123456789012")})
			return err
		},
		"PutPartnerEvents": func() error {
			_, err := eb.PutPartnerEvents(ctx, &eventbridge.PutPartnerEventsInput{Entries: []types.PutPartnerEventsRequestEntry{{}}})
			return err
		},
		"CreateEndpoint": func() error {
			_, err := eb.CreateEndpoint(ctx, &eventbridge.CreateEndpointInput{Name: awssdk.String("e"),
				EventBuses: []types.EndpointEventBus{{EventBusArn: awssdk.String("a")}, {EventBusArn: awssdk.String("b")}},
				RoutingConfig: &types.RoutingConfig{FailoverConfig: &types.FailoverConfig{
					Primary:   &types.Primary{HealthCheck: awssdk.String("arn:aws:route53:::healthcheck/x")},
					Secondary: &types.Secondary{Route: awssdk.String("us-west-2")}}}})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		assert.Equal(t, "UnknownOperationException", apiErrorCode(err), name)
		assert.ErrorContains(t, err, "AWSEvents."+name, name)
	}
}
