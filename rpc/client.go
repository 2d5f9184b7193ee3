package rpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Error is an error answer of the worker REST API.
type Error struct {
	Status  int
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("worker answered %d: %s", e.Status, e.Message)
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// IsUnauthorized reports whether err is a 401 answer: the client's cluster token is missing or not the worker's.
func IsUnauthorized(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusUnauthorized
}

// IsConflict reports whether err is a 409 answer.
func IsConflict(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusConflict
}

// Client calls the worker REST API of a worker (any worker of a cluster answers any request). Safe for
// concurrent use. Transport failures come back as they are; error answers as *Error (a missing or wrong token is
// a 401, see IsUnauthorized).
type Client struct {
	BaseURL string
	// Fallbacks are the base URLs of other workers of the cluster. A request that cannot reach its worker (the
	// connection is refused or cannot be made: nothing was sent) goes to the next one, in order; the client keeps
	// using the worker that answered.
	Fallbacks []string
	HTTP      *http.Client
	// Token is the cluster token, sent on every request as Authorization: Bearer <token>; empty sends none.
	Token string

	mu      sync.Mutex
	current int // index into bases() of the worker that last answered
	// listings holds the last answer of each listing of every connector and what it decoded to: the metrics
	// history and reconciliation list thousands of connectors every few seconds, and while nothing changes the
	// answer is the same bytes, not decoded again (guarded by mu).
	listings map[string]listing
}

// listing is one answer of a listing of every connector: a hash of its bytes (not the bytes: megabytes at
// thousands of connectors), its entity tag ("" when the worker sent none) and what it decoded to, which does not
// change once kept.
type listing struct {
	sum  uint64
	etag string
	out  map[string]ConnectorExpanded
}

// listingSeed seeds the hashes of listings.
var listingSeed = maphash.MakeSeed()

// Option configures a Client made by NewClient or NewClusterClient.
type Option func(*Client)

// WithToken sends the cluster token on every request.
func WithToken(token string) Option { return func(c *Client) { c.Token = token } }

// WithRootCAs trusts the certificates of pool (instead of the system's) for workers served over https.
func WithRootCAs(pool *x509.CertPool) Option {
	return func(c *Client) {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		c.HTTP.Transport = t
	}
}

// NewClient returns a client of the worker at baseURL (for example http://127.0.0.1:8083).
func NewClient(baseURL string, opts ...Option) *Client {
	c := &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Timeout: 60 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// NewClusterClient returns a client of the workers at baseURLs (at least one), which fails over from one to the
// next when a worker cannot be reached.
func NewClusterClient(baseURLs []string, opts ...Option) *Client {
	c := NewClient(baseURLs[0], opts...)
	for _, u := range baseURLs[1:] {
		c.Fallbacks = append(c.Fallbacks, strings.TrimRight(u, "/"))
	}
	return c
}

func (c *Client) bases() []string { return append([]string{c.BaseURL}, c.Fallbacks...) }

// unreachable reports a failure that happened before anything was sent: the request may go to another worker.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	data, err := c.call(ctx, method, path, body)
	if err != nil {
		return err
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decoding answer of %s %s: %w", method, path, err)
		}
	}
	return nil
}

// call makes one request and returns the body of a successful answer.
func (c *Client) call(ctx context.Context, method, path string, body any) ([]byte, error) {
	data, _, _, err := c.callTagged(ctx, method, path, body, "")
	return data, err
}

// callTagged is call with an entity tag: a request with ifNoneMatch set sends it as If-None-Match, and an answer
// 304 Not Modified comes back as notModified, with no data and no error. etag is the answer's ETag.
func (c *Client) callTagged(ctx context.Context, method, path string, body any, ifNoneMatch string) (data []byte,
	etag string, notModified bool, err error) {
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, "", false, err
		}
		payload = b
	}
	bases := c.bases()
	c.mu.Lock()
	start := c.current % len(bases)
	c.mu.Unlock()
	var resp *http.Response
	for i := range bases {
		idx := (start + i) % len(bases)
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, rerr := http.NewRequestWithContext(ctx, method, bases[idx]+path, rd)
		if rerr != nil {
			return nil, "", false, rerr
		}
		req.Header.Set("Accept", "application/json")
		if c.Token != "" {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		resp, err = c.HTTP.Do(req)
		if err == nil {
			c.mu.Lock()
			c.current = idx
			c.mu.Unlock()
			break
		}
		if !unreachable(err) {
			return nil, "", false, err
		}
	}
	if err != nil {
		return nil, "", false, err
	}
	defer resp.Body.Close()
	if ifNoneMatch != "" && resp.StatusCode == http.StatusNotModified {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil, resp.Header.Get("ETag"), true, nil
	}
	data, err = io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, "", false, err
	}
	if resp.StatusCode >= 300 {
		var er ErrorResponse
		if json.Unmarshal(data, &er) != nil || er.Message == "" {
			er.Message = strings.TrimSpace(string(data))
		}
		return nil, "", false, &Error{Status: resp.StatusCode, Code: er.ErrorCode, Message: er.Message}
	}
	return data, resp.Header.Get("ETag"), false, nil
}

func conn(name string) string { return "/connectors/" + url.PathEscape(name) }

// ServerInfo calls GET /.
func (c *Client) ServerInfo(ctx context.Context) (*ServerInfo, error) {
	var out ServerInfo
	return &out, c.do(ctx, http.MethodGet, "/", nil, &out)
}

// ListConnectors calls GET /connectors?expand=status&expand=info.
func (c *Client) ListConnectors(ctx context.Context) (map[string]ConnectorExpanded, error) {
	return c.ListConnectorsWithPrefix(ctx, "")
}

// ListConnectorsStamped is ListConnectors with the listing's stamp: a hash of the answer's bytes, the same for
// two calls exactly when the worker answered the same listing (or 304 to the tag of the last). A caller that keeps
// what it computed from a listing with its stamp need not compute it again while the stamp stays.
func (c *Client) ListConnectorsStamped(ctx context.Context) (map[string]ConnectorExpanded, uint64, error) {
	return c.listAll(ctx, listingPath)
}

// listingPath lists every connector with its status and config.
const listingPath = "/connectors?expand=status&expand=info"

// ListConnectorsWithPrefix calls GET /connectors?expand=status&expand=info&prefix=P: the connectors whose names
// start with P ("" lists all, see listAll).
func (c *Client) ListConnectorsWithPrefix(ctx context.Context, prefix string) (map[string]ConnectorExpanded, error) {
	if prefix == "" {
		out, _, err := c.listAll(ctx, listingPath)
		return out, err
	}
	out := map[string]ConnectorExpanded{}
	return out, c.do(ctx, http.MethodGet, listingPath+"&prefix="+url.QueryEscape(prefix), nil, &out)
}

// ListConnectorStatuses calls GET /connectors?expand=status: every connector's status without its config (Info
// is nil), for callers that read only counters and states (see listAll).
func (c *Client) ListConnectorStatuses(ctx context.Context) (map[string]ConnectorExpanded, error) {
	out, _, err := c.ListConnectorStatusesStamped(ctx)
	return out, err
}

// ListConnectorStatusesStamped is ListConnectorStatuses with the listing's stamp (see ListConnectorsStamped).
func (c *Client) ListConnectorStatusesStamped(ctx context.Context) (map[string]ConnectorExpanded, uint64, error) {
	return c.listAll(ctx, "/connectors?expand=status")
}

// listAll lists every connector at path. It sends the entity tag of its last answer at path, and a worker whose
// listing did not change since answers 304 without a body; an answer of the same bytes as the last one at path
// (the same 64-bit hash: a worker without tags, or another worker) is not decoded again. The map is the caller's;
// the statuses and infos it points to are shared with other callers and must not be changed. stamp is the hash of
// the answer's bytes (the last answer's on a 304).
func (c *Client) listAll(ctx context.Context, path string) (_ map[string]ConnectorExpanded, stamp uint64, _ error) {
	c.mu.Lock()
	last, ok := c.listings[path]
	c.mu.Unlock()
	var tag string
	if ok {
		tag = last.etag
	}
	data, etag, notModified, err := c.callTagged(ctx, http.MethodGet, path, nil, tag)
	if err != nil {
		return nil, 0, err
	}
	if notModified {
		return maps.Clone(last.out), last.sum, nil
	}
	sum := maphash.Bytes(listingSeed, data)
	out := last.out
	if !ok || last.sum != sum {
		out = map[string]ConnectorExpanded{}
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, 0, fmt.Errorf("decoding answer of GET %s: %w", path, err)
		}
	}
	c.mu.Lock()
	if c.listings == nil {
		c.listings = map[string]listing{}
	}
	c.listings[path] = listing{sum: sum, etag: etag, out: out}
	c.mu.Unlock()
	return maps.Clone(out), sum, nil
}

// CreateConnector calls POST /connectors; a 409 means it exists.
func (c *Client) CreateConnector(ctx context.Context, req CreateConnectorRequest) (*ConnectorInfo, error) {
	var out ConnectorInfo
	return &out, c.do(ctx, http.MethodPost, "/connectors", req, &out)
}

// GetConnector calls GET /connectors/{c}.
func (c *Client) GetConnector(ctx context.Context, name string) (*ConnectorInfo, error) {
	var out ConnectorInfo
	return &out, c.do(ctx, http.MethodGet, conn(name), nil, &out)
}

// GetConnectorConfig calls GET /connectors/{c}/config.
func (c *Client) GetConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	out := map[string]string{}
	return out, c.do(ctx, http.MethodGet, conn(name)+"/config", nil, &out)
}

// PutConnectorConfig calls PUT /connectors/{c}/config (creates or updates).
func (c *Client) PutConnectorConfig(ctx context.Context, name string, config map[string]string) (*ConnectorInfo, error) {
	var out ConnectorInfo
	return &out, c.do(ctx, http.MethodPut, conn(name)+"/config", config, &out)
}

// ConnectorStatus calls GET /connectors/{c}/status.
func (c *Client) ConnectorStatus(ctx context.Context, name string) (*ConnectorStatus, error) {
	var out ConnectorStatus
	return &out, c.do(ctx, http.MethodGet, conn(name)+"/status", nil, &out)
}

// PauseConnector calls PUT /connectors/{c}/pause.
func (c *Client) PauseConnector(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPut, conn(name)+"/pause", nil, nil)
}

// ResumeConnector calls PUT /connectors/{c}/resume.
func (c *Client) ResumeConnector(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPut, conn(name)+"/resume", nil, nil)
}

// DeleteConnector calls DELETE /connectors/{c}.
func (c *Client) DeleteConnector(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, conn(name), nil, nil)
}

// ListConnectorNames calls GET /connectors (names only).
func (c *Client) ListConnectorNames(ctx context.Context) ([]string, error) {
	var out []string
	return out, c.do(ctx, http.MethodGet, "/connectors", nil, &out)
}

// ListTasks calls GET /connectors/{c}/tasks.
func (c *Client) ListTasks(ctx context.Context, name string) ([]TaskInfo, error) {
	var out []TaskInfo
	return out, c.do(ctx, http.MethodGet, conn(name)+"/tasks", nil, &out)
}

// TaskStatus calls GET /connectors/{c}/tasks/{t}/status.
func (c *Client) TaskStatus(ctx context.Context, name string, task int) (*TaskState, error) {
	var out TaskState
	return &out, c.do(ctx, http.MethodGet, fmt.Sprintf("%s/tasks/%d/status", conn(name), task), nil, &out)
}

// StopConnector calls PUT /connectors/{c}/stop.
func (c *Client) StopConnector(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPut, conn(name)+"/stop", nil, nil)
}

// ListPlugins calls GET /connector-plugins.
func (c *Client) ListPlugins(ctx context.Context) ([]PluginInfo, error) {
	var out []PluginInfo
	return out, c.do(ctx, http.MethodGet, "/connector-plugins", nil, &out)
}

// IsBadRequest reports whether err is a 400 answer.
func IsBadRequest(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusBadRequest
}

// RestartConnector calls POST /connectors/{c}/restart?includeTasks=&onlyFailed=. With either flag it returns the
// connector's status (202); with neither, nil (204).
func (c *Client) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStatus, error) {
	q := url.Values{}
	q.Set("includeTasks", strconv.FormatBool(includeTasks))
	q.Set("onlyFailed", strconv.FormatBool(onlyFailed))
	var out ConnectorStatus
	if err := c.do(ctx, http.MethodPost, conn(name)+"/restart?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	return &out, nil
}

// RestartTask calls POST /connectors/{c}/tasks/{t}/restart.
func (c *Client) RestartTask(ctx context.Context, name string, task int) error {
	return c.do(ctx, http.MethodPost, fmt.Sprintf("%s/tasks/%d/restart", conn(name), task), nil, nil)
}

// GetOffsets calls GET /connectors/{c}/offsets.
func (c *Client) GetOffsets(ctx context.Context, name string) (*ConnectorOffsets, error) {
	var out ConnectorOffsets
	return &out, c.do(ctx, http.MethodGet, conn(name)+"/offsets", nil, &out)
}

// AlterOffsets calls PATCH /connectors/{c}/offsets (the connector must be STOPPED) and returns its message.
func (c *Client) AlterOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (string, error) {
	var out Message
	err := c.do(ctx, http.MethodPatch, conn(name)+"/offsets", offsets, &out)
	return out.Message, err
}

// ResetOffsets calls DELETE /connectors/{c}/offsets (the connector must be STOPPED) and returns its message.
func (c *Client) ResetOffsets(ctx context.Context, name string) (string, error) {
	var out Message
	err := c.do(ctx, http.MethodDelete, conn(name)+"/offsets", nil, &out)
	return out.Message, err
}

func plugin(name string) string { return "/connector-plugins/" + url.PathEscape(name) }

// PluginConfig calls GET /connector-plugins/{p}/config.
func (c *Client) PluginConfig(ctx context.Context, pluginName string) ([]ConfigKeyInfo, error) {
	var out []ConfigKeyInfo
	return out, c.do(ctx, http.MethodGet, plugin(pluginName)+"/config", nil, &out)
}

// PluginSchema calls GET /connector-plugins/{p}/schema: the JSON Schema of the plugin's config.
func (c *Client) PluginSchema(ctx context.Context, pluginName string) (map[string]any, error) {
	out := map[string]any{}
	return out, c.do(ctx, http.MethodGet, plugin(pluginName)+"/schema", nil, &out)
}

// ValidateConfig calls PUT /connector-plugins/{p}/config/validate; problems come back as data (ErrorCount).
func (c *Client) ValidateConfig(ctx context.Context, pluginName string, config map[string]string) (*ConfigInfos, error) {
	var out ConfigInfos
	return &out, c.do(ctx, http.MethodPut, plugin(pluginName)+"/config/validate", config, &out)
}

// ClusterInfo calls GET /getClusterInfo (RocketMQ Connect's view).
func (c *Client) ClusterInfo(ctx context.Context) (*ClusterInfo, error) {
	var out ClusterInfo
	return &out, c.do(ctx, http.MethodGet, "/getClusterInfo", nil, &out)
}

// AllocatedConnectors calls GET /allocated/connectors: the configs of the connectors the worker runs, by name.
func (c *Client) AllocatedConnectors(ctx context.Context) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	return out, c.do(ctx, http.MethodGet, "/allocated/connectors", nil, &out)
}

// AllocatedTasks calls GET /allocated/tasks: the tasks the worker runs.
func (c *Client) AllocatedTasks(ctx context.Context) ([]AllocatedTask, error) {
	var out []AllocatedTask
	return out, c.do(ctx, http.MethodGet, "/allocated/tasks", nil, &out)
}

// PluginList calls GET /plugin/list (RocketMQ Connect's view of GET /connector-plugins).
func (c *Client) PluginList(ctx context.Context) ([]PluginInfo, error) {
	var out []PluginInfo
	return out, c.do(ctx, http.MethodGet, "/plugin/list", nil, &out)
}
