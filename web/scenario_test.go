package web_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/channel"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/domain/inspect"
	"github.com/eventbridge-go/eventbridge/domain/replay"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/tag"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/aws"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"github.com/eventbridge-go/eventbridge/web/rocketmq"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// scenario is one API call against the real router on a freshly migrated database, in the manner of
// pocketbase's tests.ApiScenario.
type scenario struct {
	name    string
	method  string
	url     string
	headers map[string]string
	// body is sent as is when it is a string or []byte, else encoded as JSON.
	body any
	// setup prepares the state, typically through the API itself (env.must).
	setup func(t *testing.T, e *env)

	status int
	// contains are fragments the answer must hold; absent are fragments it must not.
	contains []string
	absent   []string
	// json maps dotted paths into the answer ("entries.1.errorCode") to the values they must hold.
	json map[string]any
	// after runs extra checks on the answer and the state.
	after func(t *testing.T, e *env, resp *response)
}

// response is an answer of the router.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the answer.
func (r *response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &v), "answer: %s", r.Body)
	return v
}

// env is the router with real services on a fresh database, a real event store on an embedded NATS server, and
// fakes at the runtime boundary.
type env struct {
	router   http.Handler
	js       jetstream.JetStream
	names    stream.Names
	buses    bus.Repository
	runtime  *fakeRuntime
	statuses *fakeStatuses
	logs     *syncBuffer
	services web.Services
	recorder *eventtype.Recorder
	// sourceRuntime stands for the worker runtime of sources (sources_test.go).
	sourceRuntime *fakeSourceRuntime
	sources       *persistence.SourceRepository
	db            *persistence.DB
	// adminKey is an instance administrator's API key, which do sends unless the request has its own
	// Authorization header (an empty value sends none).
	adminKey string
	// accountKeys are administrators' keys of accounts (account → key), for env.as.
	accountKeys map[string]string
	// exactAccounts turns off do's creation of the accounts that requests name (identity tests).
	exactAccounts bool

	// awsKeysMu guards awsKeys: the access keys that sign, on the Amazon EventBridge API, the requests that send an
	// API key (by API key; see accessKeyOf). Subtests may run in parallel.
	awsKeysMu sync.Mutex
	awsKeys   map[string]*awsCredential
}

// natsServer starts an embedded NATS server for one test and returns a JetStream context on it.
func natsServer(t testing.TB) jetstream.JetStream {
	t.Helper()
	return jetstreamtest.Start(t).JS
}

// newEnv returns an environment on a fresh database of dialect (persistence.SQLite or persistence.MySQL) and the
// JetStream js. Each env has its own cluster id, so several can share one server.
func newEnv(t testing.TB, js jetstream.JetStream, dialect string) *env {
	t.Helper()
	return newEnvOn(t, js, persistencetest.Open(t, dialect))
}

// newEnvOn returns an environment on the migrated database db and the JetStream js.
func newEnvOn(t testing.TB, js jetstream.JetStream, db *persistence.DB) *env {
	t.Helper()
	buses := persistence.NewBusRepository(db)
	rules := persistence.NewRuleRepository(db)
	targets := persistence.NewTargetRepository(db)
	cluster := "t" + strings.ToLower(domain.NewID()[:8])
	store := eventstore.New(js, cluster, 1)

	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rt := &fakeRuntime{}
	st := &fakeStatuses{status: &target.Status{State: "RUNNING", Tasks: []target.TaskStatus{{ID: 0, State: "RUNNING", WorkerID: "w1"}}}}
	sealer, err := connect.NewSealer(bytes.Repeat([]byte{0x5a}, rpc.MasterKeySize))
	require.NoError(t, err)
	connections, destinations := persistence.NewConnectionRepository(db), persistence.NewAPIDestinationRepository(db)
	eventTypes := persistence.NewEventTypeRepository(db)
	recorder := &eventtype.Recorder{Repo: eventTypes}
	services := web.Services{
		Buses: &bus.Service{Buses: buses, Rules: rules, Store: store, Runtime: rt, Logger: log,
			Observer: recorder},
		EventTypes: &eventtype.Service{Repo: eventTypes, Buses: buses},
		Rules:      &rule.Service{Rules: rules, Buses: buses, Runtime: rt, Logger: log},
		Targets: &target.Service{Targets: targets, Rules: rules, Buses: buses, Runtime: rt, Statuses: st, Logger: log,
			APIDestinations: destinations, Sealer: sealer},
		Connections:     &connection.Service{Connections: connections, Users: destinations, Sealer: sealer},
		APIDestinations: &apidestination.Service{Destinations: destinations, Connections: connections, Targets: destinations},
	}
	srcRT, sources := newFakeSourceRuntime(), persistence.NewSourceRepository(db)
	services.History = &history.Service{Store: eventstore.NewHistory(js, cluster, 1)}
	services.Inspect = &inspect.Service{Buses: buses, Rules: rules, Store: eventstore.NewEvents(js, cluster), Logs: eventstore.NewBusLog(js, cluster), DeadLetters: eventstore.NewDeadLetters(js, cluster), Tails: inspect.NewTails(2), TailRate: 50}
	services.Sources = &source.Service{Sources: sources, Buses: buses, Runtime: srcRT, Statuses: srcRT, Intake: store,
		Sealer: sealer, Opener: sealer, Logger: log}
	services.Buses.Sources = sources
	services.Channels = &channel.Service{Buses: services.Buses, Channels: persistence.NewChannelRepository(db), Rules: services.Rules,
		Targets: services.Targets, Sources: services.Sources, Runtime: rt, Logger: log}
	archives := persistence.NewArchiveRepository(db)
	services.Buses.Archives = archives
	services.Archives = &archive.Service{Archives: archives, Buses: buses, Store: store, Runtime: rt, Logger: log}
	services.Replays = &replay.Service{Replays: persistence.NewReplayRepository(db), Archives: archives, Store: store, Buses: buses,
		Rules: rules, Targets: persistence.NewTargetRepository(db), Runtime: replayRuntime{rt}, Logger: log}
	adminKey := withIdentity(t, db, &services)
	auditRepo := persistence.NewAuditRepository(db)
	services.Audit = &audit.Recorder{Entries: auditRepo} // no Run: every entry is written before the answer
	services.AuditLog = &audit.Service{Entries: auditRepo}
	// As cmd/eventbridge wires it.
	services.AccessKeys = &accesskey.Service{Keys: persistence.NewAccessKeyRepository(db), Accounts: services.Accounts.Accounts,
		Sealer: sealer, Opener: sealer, Logger: log}
	services.Tags = &tag.Service{Tags: persistence.NewTagRepository(db)}
	services.Accounts.Purgers = []account.Purger{services.Sources, services.Replays, services.Archives, services.Rules, services.Buses, services.APIDestinations,
		services.Connections, store, persistence.NewConnectorStateRepository(db), services.Users, services.APIKeys, services.AccessKeys, services.Tags}
	e := &env{
		db:       db,
		adminKey: adminKey,
		router:   newRouter(web.Config{Logger: log}, services),
		js:       js,
		names:    stream.Names{Cluster: cluster},
		buses:    buses,
		runtime:  rt,
		statuses: st,
		logs:     logs,
		services: services,
		recorder: recorder,
	}
	e.sourceRuntime, e.sources = srcRT, sources
	return e
}

// run runs each scenario on SQLite and on MySQL (subtests sqlite and mysql, in parallel), each on its own
// environment whose database holds nothing (see scenarioDBs); the scenarios of a dialect share one NATS server
// (one for both would run out of JetStream storage: streams reserve their retention).
func run(t *testing.T, scenarios []scenario) {
	t.Helper()
	eachDialect(t, func(t *testing.T, dialect string) {
		js := natsServer(t)
		fresh := scenarioDBs(t, dialect)
		for _, s := range scenarios {
			t.Run(s.name, func(t *testing.T) {
				e := newEnvOn(t, js, fresh(t))
				runScenario(t, e, s)
			})
		}
	})
}

// runScenario prepares s on e, sends its request and checks the answer.
func runScenario(t *testing.T, e *env, s scenario) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Logf("the router's log:\n%s", e.logs)
		}
	}()
	if s.setup != nil {
		s.setup(t, e)
	}
	resp := e.do(t, s.method, s.url, s.headers, s.body)
	t.Logf("%s %s -> %d %s", s.method, s.url, resp.Status, truncate(resp.Body, 600))
	assert.Equalf(t, s.status, resp.Status, "%s %s answered %s", s.method, s.url, resp.Body)
	if resp.Status >= 400 {
		assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), "errors are problem documents")
		checkProblem(t, resp)
	}
	for _, want := range s.contains {
		assert.Contains(t, string(resp.Body), want)
	}
	for _, bad := range s.absent {
		assert.NotContains(t, string(resp.Body), bad)
	}
	if len(s.json) > 0 {
		v := resp.JSON(t)
		for path, want := range s.json {
			assertJSONPath(t, v, path, want)
		}
	}
	if s.after != nil {
		s.after(t, e, resp)
	}
}

// eachDialect runs f once per dialect of persistencetest.Dialects, as parallel subtests named after the dialect.
func eachDialect(t *testing.T, f func(t *testing.T, dialect string)) {
	t.Helper()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			f(t, dialect)
		})
	}
}

// scenarioDBs returns a function that gives each scenario of a test on dialect an empty, migrated database; the
// scenarios must run one after the other. On SQLite every call opens a fresh database, as cheap as a file. On MySQL,
// where creating and migrating a database takes about half a second (the DDL of the migrations), the test opens
// one database and every call deletes the rows of all its tables (but goose's version table) first: a scenario
// sees the same empty schema as on a fresh database, for a few milliseconds of DELETEs.
func scenarioDBs(t *testing.T, dialect string) func(t *testing.T) *persistence.DB {
	t.Helper()
	if dialect != persistence.MySQL {
		return func(t *testing.T) *persistence.DB {
			t.Helper()
			return persistencetest.Open(t, dialect)
		}
	}
	db := persistencetest.Open(t, dialect)
	return func(t *testing.T) *persistence.DB {
		t.Helper()
		emptyMySQL(t, db)
		return db
	}
}

// emptyMySQL deletes every row of every table of db but goose's version table.
func emptyMySQL(t *testing.T, db *persistence.DB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.SQL().QueryContext(ctx, "SELECT table_name FROM information_schema.tables "+
		"WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version'")
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.NotEmpty(t, tables, "the database is migrated")
	// One connection, as FOREIGN_KEY_CHECKS is a session variable: rows are deleted in any order.
	conn, err := db.SQL().Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET FOREIGN_KEY_CHECKS = 0")
	require.NoError(t, err)
	for _, table := range tables {
		_, err := conn.ExecContext(ctx, "DELETE FROM `"+table+"`")
		require.NoError(t, err, "emptying %s", table)
	}
	_, err = conn.ExecContext(ctx, "SET FOREIGN_KEY_CHECKS = 1")
	require.NoError(t, err)
}

// checkProblem checks the members every problem document has.
func checkProblem(t *testing.T, resp *response) {
	t.Helper()
	var p web.Problem
	require.NoError(t, json.Unmarshal(resp.Body, &p), "problem: %s", resp.Body)
	assert.Equal(t, resp.Status, p.Status, "problem status")
	assert.Equal(t, http.StatusText(resp.Status), p.Title, "problem title")
	assert.NotEmpty(t, p.Code, "problem code")
	assert.NotEmpty(t, p.Detail, "problem detail")
	if p.Type != "about:blank" {
		assert.Equal(t, web.ProblemTypeBase+p.Code, p.Type, "problem type")
	}
}

// do sends one request to the router. A URL with a fragment is a request of the Amazon EventBridge API for the
// operation it names (Operation.Route: "/#AWSEvents.ListEventBuses"): it is sent to the path without the fragment,
// with X-Amz-Target naming the operation, in AWS JSON 1.1 unless headers give a Content-Type, and its API key, if
// any, turned into that API's credential (signAsAPIKey).
func (e *env) do(t testing.TB, method, url string, headers map[string]string, body any) *response {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		j, err := json.Marshal(b)
		require.NoError(t, err)
		raw = j
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(raw)
	}
	url, target, _ := strings.Cut(url, "#") // httptest would keep "#..." in the path
	req := localRequest(method, url, r)
	switch {
	case target != "":
		req.Header.Set("Content-Type", aws.ContentType)
	case body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	if e.adminKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.adminKey)
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	if target != "" {
		req.Header.Set(aws.TargetHeader, target)
		e.signAsAPIKey(t, req, raw)
	}
	// Accounts are created by an instance administrator; the scenarios that name one get it made first.
	if !e.exactAccounts && e.services.Accounts != nil {
		for _, h := range []string{rest.AccountHeader, rocketmq.AccountHeader} {
			if id := req.Header.Get(h); id != "" && domain.ValidateAccountID(id) == nil {
				ensureAccount(t, e.services, id)
			}
		}
	}
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// awsCredential is an access key and its secret.
type awsCredential struct {
	key    *accesskey.Key
	secret string
}

// signAsAPIKey turns the API key that req sends (Authorization: Bearer) into the credential of the Amazon
// EventBridge API, whose requests are authenticated by Signature Version 4 only: req is signed with the access key
// of the same account and role (accessKeyOf). An instance administrator's key has no access key: req is sent
// unsigned (answered MissingAuthenticationTokenException). A bearer token that authenticates nothing is sent as it
// is (answered IncompleteSignatureException), as a client that sends one would.
func (e *env) signAsAPIKey(t testing.TB, req *http.Request, body []byte) {
	t.Helper()
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || e.services.APIKeys == nil || e.services.AccessKeys == nil {
		return
	}
	cred, ok := e.accessKeyOf(t, token)
	switch {
	case !ok:
	case cred == nil:
		req.Header.Del("Authorization")
	default:
		signAWS(t, req, body, cred.key.ID(), cred.secret)
	}
}

// accessKeyOf returns the access key of the account and role of the API key token, created at its first use and
// kept in e (one per API key). It is nil for an instance administrator's key: access keys belong to one account
// with one role, an instance administrator has none. ok is false when token authenticates no API key.
func (e *env) accessKeyOf(t testing.TB, token string) (cred *awsCredential, ok bool) {
	t.Helper()
	ctx := context.Background()
	p, err := e.services.APIKeys.Authenticate(ctx, token)
	if errors.Is(err, access.ErrUnauthenticated) {
		return nil, false
	}
	require.NoError(t, err)
	home := p.HomeAccount()
	role, member := p.RoleIn(home)
	if p.InstanceAdmin() || !member {
		return nil, true
	}
	require.Emptyf(t, p.Buses(), "API key %s is restricted to buses; an access key cannot be", p.Name())
	e.awsKeysMu.Lock()
	defer e.awsKeysMu.Unlock()
	if c, ok := e.awsKeys[token]; ok {
		return c, true
	}
	k, secret, err := e.services.AccessKeys.Create(ctx, nil, home, accesskey.Spec{Name: "ak-" + p.ID(), Role: role})
	require.NoError(t, err)
	if e.awsKeys == nil {
		e.awsKeys = map[string]*awsCredential{}
	}
	c := &awsCredential{key: k, secret: secret}
	e.awsKeys[token] = c
	return c, true
}

// signAWS signs req, whose body is body, with Signature Version 4 by the access key id and its secret, for the
// Amazon EventBridge API in the router's default region, as the AWS SDKs sign (their v4 signer, now).
func signAWS(t testing.TB, req *http.Request, body []byte, id, secret string) {
	t.Helper()
	req.Header.Del("Authorization")
	sum := sha256.Sum256(body)
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), awssdk.Credentials{AccessKeyID: id, SecretAccessKey: secret},
		req, hex.EncodeToString(sum[:]), aws.Service, aws.DefaultRegion, time.Now()))
}

// must sends a JSON request and requires the status.
func (e *env) must(t *testing.T, method, url string, body any, status int) *response {
	t.Helper()
	resp := e.do(t, method, url, nil, body)
	require.Equalf(t, status, resp.Status, "%s %s answered %s", method, url, resp.Body)
	return resp
}

// Fixtures made through the API.

func (e *env) createBus(t *testing.T, name string) {
	t.Helper()
	e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": name}, http.StatusCreated)
}

func (e *env) createRule(t *testing.T, busName, name string) {
	t.Helper()
	e.must(t, http.MethodPost, "/api/v1/buses/"+busName+"/rules",
		map[string]any{"name": name, "eventPattern": map[string]any{"source": []any{"shop"}}}, http.StatusCreated)
}

func (e *env) putTarget(t *testing.T, busName, ruleName, name string) {
	t.Helper()
	e.must(t, http.MethodPut, "/api/v1/buses/"+busName+"/rules/"+ruleName+"/targets/"+name,
		map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/" + name}}, http.StatusCreated)
}

// setups composes fixtures.
func setups(fs ...func(t *testing.T, e *env)) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		for _, f := range fs {
			f(t, e)
		}
	}
}

func withBus(name string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) { e.createBus(t, name) }
}

func withRule(busName, name string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) { e.createRule(t, busName, name) }
}

func withTarget(busName, ruleName, name string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) { e.putTarget(t, busName, ruleName, name) }
}

// storedEvents reads every event put on the bus of the default account from its stream.
func (e *env) storedEvents(t *testing.T, busName string) []*event.Event {
	t.Helper()
	return e.storedEventsOf(t, domain.DefaultAccountID, busName)
}

// storedEventsOf reads every event put on the account's bus from its stream.
func (e *env) storedEventsOf(t *testing.T, accountID, busName string) []*event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := e.buses.Get(ctx, accountID, busName)
	require.NoError(t, err)
	s, err := e.js.Stream(ctx, e.names.BusStream(b.ID()))
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	var out []*event.Event
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		require.NoError(t, err)
		require.Equal(t, e.names.BusIn(b.ID()), m.Subject)
		evs, err := stream.DecodeAll(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		require.NoError(t, err)
		out = append(out, evs...)
	}
	return out
}

// assertJSONPath checks the value at a dotted path ("entries.1.errorCode"; numbers index arrays) of v.
func assertJSONPath(t *testing.T, v any, path string, want any) {
	t.Helper()
	cur := v
	for _, part := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[part]
			if !assert.Truef(t, ok, "%s: no member %q in %v", path, part, c) {
				return
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(part)
			if !assert.NoErrorf(t, err, "%s: %q indexes an array", path, part) || !assert.Lessf(t, i, len(c), "%s: index out of range", path) {
				return
			}
			cur = c[i]
		default:
			assert.Failf(t, "no such path", "%s: %q is below a %T", path, part, cur)
			return
		}
	}
	// Compare JSON forms, so 201 and float64(201) are equal.
	wj, err := json.Marshal(want)
	require.NoError(t, err)
	gj, err := json.Marshal(cur)
	require.NoError(t, err)
	assert.JSONEqf(t, string(wj), string(gj), "at %s", path)
}

// fakeRuntime stands for the worker runtime, a process boundary: it records what it is asked to apply.
type fakeRuntime struct {
	mu      sync.Mutex
	synced  []string
	removed []string
}

func (f *fakeRuntime) SyncBus(_ context.Context, b *bus.Bus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced = append(f.synced, b.Name())
	return nil
}

func (f *fakeRuntime) RemoveBus(_ context.Context, b *bus.Bus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, b.Name())
	return nil
}

// replayRuntime is fakeRuntime as replays see it: no connector runs, so a replay stays STARTING (the API tests do
// not run the runtime; cmd/eventbridge's replay tests do).
type replayRuntime struct{ *fakeRuntime }

func (replayRuntime) ReplayReport(context.Context, *replay.Replay) (replay.Report, error) {
	return replay.Report{}, nil
}

func (f *fakeRuntime) calls() (synced, removed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.synced...), append([]string(nil), f.removed...)
}

// fakeStatuses answers a fixed runtime status, or an error.
type fakeStatuses struct {
	mu     sync.Mutex
	status *target.Status
	err    error
}

func (f *fakeStatuses) TargetStatus(context.Context, *bus.Bus, *rule.Rule, *target.Target) (*target.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status == nil {
		return nil, f.err
	}
	// A status of its own for every call, as the runtime answers: the service fills in its summary.
	st := *f.status
	st.Tasks = slices.Clone(f.status.Tasks)
	return &st, f.err
}

func (f *fakeStatuses) set(st *target.Status, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.err = st, err
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var (
	_ bus.Runtime         = (*fakeRuntime)(nil)
	_ target.StatusReader = (*fakeStatuses)(nil)
)

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}

// newRouter is the control plane's router with every dialect, as cmd/eventbridge builds it.
func newRouter(cfg web.Config, s web.Services) *web.Router {
	return web.NewRouter(cfg, s, rest.New, rocketmq.New, aws.New)
}

// localRequest is httptest.NewRequest on the host localhost, which the router answers (httptest's example.com is
// not one of its public hosts).
func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "localhost"
	return r
}

// doAWS sends a request of the Amazon EventBridge API for the operation target ("AWSEvents.ListEventBuses") with
// body to the router, with the credential that auth gives it (a signature, another Authorization header; nil
// sends none). Unlike do, it adds nothing of its own.
func (e *env) doAWS(t testing.TB, target, body string, auth func(req *http.Request, body []byte)) *response {
	t.Helper()
	req := localRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", aws.ContentType)
	req.Header.Set(aws.TargetHeader, target)
	if auth != nil {
		auth(req, []byte(body))
	}
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}
