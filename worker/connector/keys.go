package connector

import (
	"errors"
	"fmt"
	"strings"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
)

// Common config keys: the contract the control plane's runtime adapter writes. Plugin keys come on top.
const (
	KeyClass    = rpc.ConfigConnectorClass // plugin name
	KeyTasksMax = rpc.ConfigTasksMax       // number of tasks; the tasks of a JetStream-fed sink share its consumer
	KeyTopics   = rpc.ConfigTopics         // the subject a sink reads, or several, comma-separated

	KeyStream        = "jetstream.stream"         // the stream a sink reads
	KeyDurable       = "jetstream.durable"        // the sink's durable consumer
	KeyDeliverPolicy = "jetstream.deliver.policy" // all | new; applies when the consumer is created

	KeyRetryMaxAttempts  = "errors.retry.max.attempts"     // retries after the first attempt; 0 = none
	KeyRetryTimeout      = "errors.retry.timeout"          // max event age in ms for a retry; -1 = unbounded
	KeyRetryDelayInitial = "errors.retry.delay.initial.ms" // delay before the first retry, doubling after
	KeyRetryDelayMax     = "errors.retry.delay.max.ms"     // cap of the delay
	KeyErrorsTolerance   = "errors.tolerance"              // none | all
	// KeyDLQTopic is the subject dead letters are published to (errors.tolerance=all); empty drops them.
	KeyDLQTopic = "errors.deadletterqueue.topic.name"

	// KeyLogTopic is the subject of the bus-log records the task writes (stream.LogRecord); empty writes none.
	KeyLogTopic = "eventlog.topic.name"
	// KeyLogLevel is the bus's log level (stream.LogOff, LogError, LogInfo, LogTrace): the records written.
	KeyLogLevel = "eventlog.level"
	// KeyLogDetail is stream.LogDetailNone or LogDetailFull: whether records carry the event and answers.
	KeyLogDetail = "eventlog.include.detail"
)

// Values of enumerated common keys.
const (
	DeliverAll      = "all"
	DeliverNew      = "new"
	ToleranceNone   = "none"
	ToleranceAll    = "all"
	DefaultTasksMax = "1"
)

// SinkSpec returns the common keys of sinks fed by a JetStream consumer.
func SinkSpec() Spec {
	return Spec{
		{Name: KeyClass, Title: "Connector plugin", Type: TypeString, Required: true,
			Doc: "Name of the connector plugin that runs the connector (Kafka Connect's connector.class)."},
		{Name: KeyTasksMax, Title: "Number of tasks", Type: TypeInt, Default: DefaultTasksMax, Min: Min(1),
			Doc: "Number of tasks; the tasks of a sink share its durable consumer."},
		{Name: KeyTopics, Title: "Input subjects", Type: TypeString, Required: true, Check: checkTopics,
			Example: "eb.bus.q4xbm2n7vd3kza6e.rule.k7d2mz4xq5vb3nta",
			Doc: "Subject the sink reads (the consumer's filter subject), or several subjects, comma-separated " +
				"(the consumer's filter subjects), as Kafka Connect's topics list."},
		{Name: KeyStream, Title: "Stream", Type: TypeString, Required: true, Check: checkName,
			Example: "eb_BUS_q4xbm2n7vd3kza6e",
			Doc:     "JetStream stream the sink reads, which stores the input subjects."},
		{Name: KeyDurable, Title: "Durable consumer", Type: TypeString, Required: true, Check: checkName,
			Example: "eb_k7d2mz4xq5vb3nta_m2c7xq4kz5vd3bna",
			Doc:     "Durable consumer of the sink; created or updated before the connector's config is answered."},
		{Name: KeyDeliverPolicy, Title: "Deliver policy", Type: TypeEnum, Default: DeliverAll, Enum: []string{DeliverAll, DeliverNew},
			Doc: "Where a new consumer starts: every stored record (all) or records stored from now on (new)."},
		{Name: KeyRetryMaxAttempts, Title: "Retry attempts", Type: TypeInt, Default: "185", Min: Min(0),
			Doc: "Retries of a record after its first attempt; 0 disables retries."},
		{Name: KeyRetryTimeout, Title: "Retry timeout (ms)", Type: TypeInt, Default: "86400000", Min: Min(-1),
			Doc: "Maximum age in milliseconds of a record that is still retried; -1 is unbounded, 0 disables retries."},
		{Name: KeyRetryDelayInitial, Title: "Initial retry delay (ms)", Type: TypeInt, Default: "1000", Min: Min(1),
			Doc: "Delay in milliseconds before the first retry; it doubles with each attempt, with ±20% jitter."},
		{Name: KeyRetryDelayMax, Title: "Maximum retry delay (ms)", Type: TypeInt, Default: "60000", Min: Min(1),
			Doc: "Maximum delay in milliseconds between two attempts."},
		{Name: KeyErrorsTolerance, Title: "Error tolerance", Type: TypeEnum, Default: ToleranceAll, Enum: []string{ToleranceNone, ToleranceAll},
			Doc: "What happens to a record whose retries are exhausted or whose error is permanent (a transform " +
				"that refuses it included): all dead-letters it (errors.deadletterqueue.topic.name) or drops it (logged and counted), none fails the task and leaves the " +
				"record in the stream."},
		{Name: KeyDLQTopic, Title: "Dead-letter subject", Type: TypeString, Check: checkPublishSubject,
			Example: "eb.dlq.default",
			Doc: "Subject dead letters are published to when errors.tolerance is all: each record given up (retries " +
				"exhausted, permanent error, refused by a transform) is published there with the reason, attempts and " +
				"connector in eb-dlq-* headers, and acked only once stored. Empty: such records are dropped."},
		{Name: KeyLogTopic, Title: "Bus log subject", Type: TypeString, Check: checkPublishSubject,
			Example: "eb.log.default.q4xbm2n7vd3kza6e",
			Doc: "Subject the task writes its bus-log records to (what it did with each record, as JSON): every " +
				"attempt of a sink, and what a router matched. Empty: none."},
		{Name: KeyLogLevel, Title: "Bus log level", Type: TypeEnum, Default: stream.LogOff, Enum: stream.LogLevels,
			Doc: "Which bus-log records are written: OFF none, ERROR failures, INFO also successes and matches, " +
				"TRACE also the rules an event did not match, with why."},
		{Name: KeyLogDetail, Title: "Bus log detail", Type: TypeEnum, Default: stream.LogDetailNone, Enum: []string{stream.LogDetailNone, stream.LogDetailFull},
			Doc: "What the bus-log records carry besides what happened: NONE nothing more; FULL adds the event to the " +
				"records that say it was read, and the start of the answer to failed attempts."},
		{Name: KeyTransforms, Title: "Transforms", Type: TypeString, Example: "tenant,input",
			Doc: "Names of the transforms applied, in this order, to each record before the sink writes it, " +
				"comma-separated; each is configured by transforms.<name>.type (its plugin) and " +
				"transforms.<name>.<key> (the plugin's keys)."},
	}
}

// checkName accepts JetStream stream and consumer names.
func checkName(v string) error {
	if strings.ContainsAny(v, ".*> \t\r\n/\\") {
		return errors.New("must not contain '.', '*', '>', '/', '\\' or whitespace")
	}
	return nil
}

// checkSubject accepts NATS subjects, wildcards included.
func checkSubject(v string) error {
	if strings.ContainsAny(v, " \t\r\n") {
		return errors.New("a subject must not contain whitespace")
	}
	for _, tok := range strings.Split(v, ".") {
		if tok == "" {
			return errors.New("a subject must not have empty tokens")
		}
	}
	return nil
}

// checkTopics accepts one NATS subject or several, comma-separated, each at most once.
func checkTopics(v string) error {
	seen := map[string]bool{}
	for i, s := range strings.Split(v, ",") {
		if s == "" {
			return fmt.Errorf("subject %d of the list is empty", i+1)
		}
		if err := checkSubject(s); err != nil {
			return fmt.Errorf("subject %q: %w", s, err)
		}
		if seen[s] {
			return fmt.Errorf("subject %q is listed twice", s)
		}
		seen[s] = true
	}
	return nil
}

// checkPublishSubject accepts "" (none) and NATS subjects without wildcards.
func checkPublishSubject(v string) error {
	if v == "" {
		return nil
	}
	if strings.ContainsAny(v, "*>") {
		return errors.New("a subject to publish to must not contain wildcards")
	}
	return checkSubject(v)
}
