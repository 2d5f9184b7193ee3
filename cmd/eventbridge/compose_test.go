package main

import (
	"bufio"
	"flag"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v2"

	"github.com/eventbridge-go/eventbridge/rpc"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// The production layout is docker-compose.yml and the Dockerfile. No Docker engine runs here: these tests parse both
// files and check what they name against the binaries' own flag parsers (ParseConfig here, Main.ParseFlags of
// cmd/worker in cmd/worker/compose_test.go, nats-server's server.ConfigureOptions for the NATS nodes).

// composeFile is the part of the Compose specification that docker-compose.yml uses. It is decoded strictly, so a
// misspelt key (depends-on, healthCheck) fails the test instead of being ignored as Docker Compose would refuse it.
type composeFile struct {
	Name       string                    `yaml:"name"`
	Services   map[string]composeService `yaml:"services"`
	Volumes    map[string]any            `yaml:"volumes"`
	Extensions map[string]any            `yaml:",inline"` // x-* blocks, referenced through YAML anchors
}

type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context string `yaml:"context"`
		Target  string `yaml:"target"`
	} `yaml:"build"`
	Restart     string            `yaml:"restart"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Healthcheck *struct {
		Test        []string `yaml:"test"`
		Interval    string   `yaml:"interval"`
		Timeout     string   `yaml:"timeout"`
		Retries     int      `yaml:"retries"`
		StartPeriod string   `yaml:"start_period"`
	} `yaml:"healthcheck"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
}

// loadCompose reads docker-compose.yml as Docker Compose would see it with no variables set: ${NAME:-default}
// becomes its default and $$ a literal $.
func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	expanded := os.Expand(string(b), func(v string) string {
		if v == "$" {
			return "$"
		}
		name, def, ok := strings.Cut(v, ":-")
		require.True(t, ok, "variable %s has no default: the file must work without an .env", name)
		return def
	})
	var f composeFile
	require.NoError(t, yaml.UnmarshalStrict([]byte(expanded), &f))
	return f
}

// mount is the target path of the named volume vol in svc's volumes ("" when not mounted) and whether it is
// read-only.
func (svc composeService) mount(vol string) (target string, readOnly bool) {
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		if parts[0] == vol && len(parts) >= 2 {
			return parts[1], len(parts) == 3 && parts[2] == "ro"
		}
	}
	return "", false
}

// healthURL is the URL a service's health check fetches with wget.
func (svc composeService) healthURL(t *testing.T) *url.URL {
	t.Helper()
	require.NotNil(t, svc.Healthcheck)
	test := svc.Healthcheck.Test
	require.GreaterOrEqual(t, len(test), 3)
	require.Equal(t, []string{"CMD", "wget"}, test[:2], "health checks run wget, which the images have")
	u, err := url.Parse(test[len(test)-1])
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", u.Hostname(), "a health check asks the container itself")
	return u
}

// publishedTo is the container ports a service publishes.
func (svc composeService) publishedTo() []string {
	var out []string
	for _, p := range svc.Ports {
		p, _, _ = strings.Cut(p[strings.LastIndex(p, ":")+1:], "/") // [host-ip:][host-port:]port[/protocol]
		out = append(out, p)
	}
	return out
}

// flagValue reads the value of --name in a command line of another binary with Go's flag syntax (--name value or
// --name=value). That binary's own test checks that the whole line parses with its real parser; this only reads
// one value for cross-checks.
func flagValue(args []string, name string) string {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func portOf(t *testing.T, hostport string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	require.NoError(t, err, hostport)
	return p
}

var (
	composeWorkers     = []string{"worker-1", "worker-2"}
	composeNATSNodes   = []string{"nats-1", "nats-2", "nats-3"}
	composeOurServices = []string{"secrets", "worker-1", "worker-2", "eventbridge"}
)

// composeSecrets is what the secrets service wrote when the test ran its script: the host directory of each volume
// it writes (keys, nats-auth).
type composeSecrets struct {
	volumes map[string]string
}

// runComposeSecrets runs the secrets service's script with /bin/sh, its volumes' mount points replaced by
// temporary directories, as the container would on the first start.
func runComposeSecrets(t *testing.T, f composeFile) composeSecrets {
	t.Helper()
	svc := f.Services["secrets"]
	require.Len(t, svc.Command, 3)
	require.Equal(t, []string{"/bin/sh", "-ec"}, svc.Command[:2])
	script := svc.Command[2]
	out := composeSecrets{volumes: map[string]string{}}
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		require.Len(t, parts, 2, "the secrets service writes its volumes: %s", v)
		dir := filepath.Join(t.TempDir(), parts[0])
		require.NoError(t, os.Mkdir(dir, 0o700))
		script = strings.ReplaceAll(script, parts[1], dir)
		out.volumes[parts[0]] = dir
	}
	run := func() {
		cmd := exec.Command("/bin/sh", "-ec", script)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "the secrets script: %s", b)
	}
	run()
	return out
}

// hostPath is where the file at path in svc's container is on the test's host: through svc's mount of a volume the
// secrets service wrote ("" when path is in no such volume).
func (s composeSecrets) hostPath(svc composeService, path string) string {
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		dir, ok := s.volumes[parts[0]]
		if !ok || len(parts) < 2 {
			continue
		}
		if rest, ok := strings.CutPrefix(path, parts[1]+"/"); ok {
			return filepath.Join(dir, rest)
		}
	}
	return ""
}

func TestComposeServicesVolumesAndDependencies(t *testing.T) {
	t.Parallel()
	f := loadCompose(t)
	var names []string
	for name := range f.Services {
		names = append(names, name)
	}
	assert.ElementsMatch(t, []string{"mysql", "nats-1", "nats-2", "nats-3", "secrets", "worker-1", "worker-2", "eventbridge"}, names)
	for k := range f.Extensions {
		assert.True(t, strings.HasPrefix(k, "x-"), "unknown top-level key %q", k)
	}

	// Images: ours built once from the Dockerfile and shared; MySQL 8; NATS 2.11 or newer in its alpine variant,
	// whose busybox has the wget of the health checks.
	image := f.Services["eventbridge"].Image
	require.NotEmpty(t, image)
	for _, name := range composeOurServices {
		svc := f.Services[name]
		assert.Equal(t, image, svc.Image, name)
		if assert.NotNil(t, svc.Build, name) {
			assert.Equal(t, ".", svc.Build.Context, name)
			assert.Equal(t, "runtime", svc.Build.Target, name)
		}
	}
	assert.Regexp(t, `^mysql:8(\.\d+)*$`, f.Services["mysql"].Image)
	for _, name := range composeNATSNodes {
		m := regexp.MustCompile(`^nats:(\d+)\.(\d+)(\.\d+)?-alpine$`).FindStringSubmatch(f.Services[name].Image)
		require.NotNil(t, m, "%s: image %q", name, f.Services[name].Image)
		major, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		assert.True(t, major > 2 || (major == 2 && minor >= 11), "%s: nats-server 2.11 or newer (KV with per-key TTL)", name)
	}

	// Every long-running service has a health check and restarts; the secrets job runs once.
	for name, svc := range f.Services {
		if name == "secrets" {
			assert.Equal(t, "no", svc.Restart)
			assert.Nil(t, svc.Healthcheck)
			continue
		}
		assert.Equal(t, "unless-stopped", svc.Restart, name)
		if assert.NotNil(t, svc.Healthcheck, name) {
			assert.Equal(t, "CMD", svc.Healthcheck.Test[0], name)
			assert.Positive(t, svc.Healthcheck.Retries, name)
		}
	}

	// Named volumes: every one used is declared and every one declared is used; each NATS node has its own.
	used := map[string]bool{}
	for name, svc := range f.Services {
		for _, v := range svc.Volumes {
			src, _, _ := strings.Cut(v, ":")
			require.False(t, strings.HasPrefix(src, "/") || strings.HasPrefix(src, "."), "%s: %s is a bind mount", name, v)
			assert.Contains(t, f.Volumes, src, "%s: volume %s is not declared", name, src)
			used[src] = true
		}
	}
	for v := range f.Volumes {
		assert.True(t, used[v], "volume %s is declared and never used", v)
	}
	for _, name := range composeNATSNodes {
		target, _ := f.Services[name].mount(name)
		assert.NotEmpty(t, target, "%s mounts its own volume", name)
		target, ro := f.Services[name].mount("nats-auth")
		assert.NotEmpty(t, target, "%s reads its authorization from volume nats-auth", name)
		assert.True(t, ro, name)
	}
	for name, svc := range f.Services {
		if target, _ := svc.mount("nats-auth"); target != "" {
			assert.True(t, name == "secrets" || slices.Contains(composeNATSNodes, name), "only the NATS nodes read nats-auth, not %s", name)
		}
		if target, _ := svc.mount("keys"); target != "" {
			assert.Contains(t, composeOurServices, name, "only our services read keys, not %s", name)
		}
	}
	target, _ := f.Services["mysql"].mount("mysql")
	assert.Equal(t, "/var/lib/mysql", target)

	// depends_on names services that exist, and each condition is one the dependency can meet.
	for name, svc := range f.Services {
		for dep, cond := range svc.DependsOn {
			d, ok := f.Services[dep]
			require.True(t, ok, "%s depends on %s, which does not exist", name, dep)
			switch cond.Condition {
			case "service_healthy":
				assert.NotNil(t, d.Healthcheck, "%s waits for %s to be healthy, which has no health check", name, dep)
			case "service_completed_successfully":
				assert.Equal(t, "no", d.Restart, "%s waits for %s to complete, which is restarted", name, dep)
			case "service_started":
			default:
				t.Errorf("%s: depends_on %s: unknown condition %q", name, dep, cond.Condition)
			}
		}
	}
	for _, name := range composeWorkers {
		for _, dep := range append(slices.Clone(composeNATSNodes), "secrets") {
			assert.Contains(t, f.Services[name].DependsOn, dep, name)
		}
	}
	for _, dep := range append(append([]string{"mysql", "secrets"}, composeNATSNodes...), composeWorkers...) {
		assert.Contains(t, f.Services["eventbridge"].DependsOn, dep)
	}
	for _, name := range append(slices.Clone(composeNATSNodes), append(composeWorkers, "eventbridge")...) {
		assert.Equal(t, "service_completed_successfully", f.Services[name].DependsOn["secrets"].Condition,
			"%s starts once its secrets exist", name)
	}
	assert.Equal(t, "service_healthy", f.Services["eventbridge"].DependsOn["mysql"].Condition)
}

// natsFlags serialises server.ConfigureOptions, which also records its result in the package variable
// server.FlagSnapshot (read when a server reloads its configuration).
var natsFlags sync.Mutex

// natsOptions parses a NATS node's command line with nats-server's own parser, reading its --config from what the
// secrets service wrote.
func natsOptions(t *testing.T, svc composeService, secrets composeSecrets) *server.Options {
	t.Helper()
	require.NotEmpty(t, svc.Command)
	require.Equal(t, "nats-server", svc.Command[0])
	args := slices.Clone(svc.Command[1:])
	for i := range args {
		if (args[i] == "--config" || args[i] == "-c") && i+1 < len(args) {
			host := secrets.hostPath(svc, args[i+1])
			require.NotEmpty(t, host, "--config %s is in a volume the secrets service writes", args[i+1])
			args[i+1] = host
		}
	}
	fs := flag.NewFlagSet("nats-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fail := func() { t.Errorf("nats-server would print and exit: %v", svc.Command) }
	natsFlags.Lock()
	snapshot := server.FlagSnapshot
	opts, err := server.ConfigureOptions(fs, args, fail, fail, fail)
	server.FlagSnapshot = snapshot // no embedded server of this package reloads with the compose file's flags
	natsFlags.Unlock()
	require.NoError(t, err, "%v", svc.Command)
	require.NotNil(t, opts, "%v", svc.Command)
	require.Zero(t, fs.NArg(), "stray arguments %v", fs.Args())
	return opts
}

// natsClientPort is the port a NATS node serves clients on.
func natsClientPort(o *server.Options) int {
	if o.Port == 0 {
		return server.DEFAULT_PORT
	}
	return o.Port
}

func TestComposeNATSCluster(t *testing.T) {
	t.Parallel()
	f := loadCompose(t)
	secrets := runComposeSecrets(t, f)
	clusterPorts := map[string]int{}
	opts := map[string]*server.Options{}
	for _, name := range composeNATSNodes {
		o := natsOptions(t, f.Services[name], secrets)
		opts[name] = o
		require.NotZero(t, o.Cluster.Port, "%s listens for routes", name)
		clusterPorts[name] = o.Cluster.Port
	}
	for _, name := range composeNATSNodes {
		o, svc := opts[name], f.Services[name]
		assert.Equal(t, name, o.ServerName, "JetStream in a cluster needs unique server names")
		assert.True(t, o.JetStream, "%s runs JetStream", name)
		target, _ := svc.mount(name)
		assert.Equal(t, target, o.StoreDir, "%s keeps JetStream on its volume", name)
		assert.Equal(t, "eventbridge", o.Cluster.Name, name)
		assert.Equal(t, "0.0.0.0", o.Cluster.Host, "%s: routes come from the other containers", name)

		// Routes: to every node (nats-server ignores the one to itself), authenticated with the cluster's own user
		// and password, which are not the clients'.
		var routes []string
		for _, r := range o.Routes {
			assert.Equal(t, "nats", r.Scheme)
			assert.Equal(t, strconv.Itoa(clusterPorts[r.Hostname()]), r.Port(), "%s: route %s uses that node's cluster port", name, r.Redacted())
			routes = append(routes, r.Hostname())
			require.NotNil(t, r.User, "%s: routes authenticate", name)
			pass, _ := r.User.Password()
			assert.Equal(t, o.Cluster.Username, r.User.Username(), name)
			assert.Equal(t, o.Cluster.Password, pass, "%s: a route presents the password the other nodes require", name)
		}
		assert.ElementsMatch(t, composeNATSNodes, routes, "%s routes to the three nodes", name)
		assert.NotEmpty(t, o.Cluster.Username, "%s: routes must authenticate", name)
		assert.GreaterOrEqual(t, len(o.Cluster.Password), 32, name)

		// Clients: the user and password of keys/nats-credentials, which the control plane and workers send.
		creds, err := ebjs.ReadCredentialsFile(filepath.Join(secrets.volumes["keys"], "nats-credentials"))
		require.NoError(t, err)
		assert.Equal(t, creds.User, o.Username, "%s requires the clients' user", name)
		assert.Equal(t, creds.Password, o.Password, "%s requires the clients' password", name)
		assert.NotEqual(t, o.Cluster.Password, o.Password, "routes and clients have passwords of their own")

		u := svc.healthURL(t)
		assert.Equal(t, strconv.Itoa(o.HTTPPort), u.Port(), "%s: the health check asks the monitoring port", name)
		assert.Equal(t, "/healthz", u.Path)
		assert.Equal(t, "true", u.Query().Get("js-enabled-only"))
		assert.Empty(t, svc.Ports, "%s is reached on the compose network only", name)
	}

	// A node started with these options (on free loopback ports, alone) refuses clients without the credentials
	// and serves those with them.
	o := opts["nats-1"].Clone()
	o.Host, o.Port, o.HTTPPort, o.Cluster.Port, o.Routes = "127.0.0.1", -1, 0, 0, nil
	o.StoreDir, o.NoLog, o.NoSigs = t.TempDir(), true, true
	ns, err := server.NewServer(o)
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	t.Cleanup(ns.Shutdown)
	creds, err := ebjs.ReadCredentialsFile(filepath.Join(secrets.volumes["keys"], "nats-credentials"))
	require.NoError(t, err)
	_, err = nats.Connect(ns.ClientURL(), nats.MaxReconnects(0))
	assert.ErrorIs(t, err, nats.ErrAuthorization, "an anonymous client is refused")
	nc, err := nats.Connect(ns.ClientURL(), creds.Option(), nats.MaxReconnects(0))
	require.NoError(t, err, "the control plane's and workers' credentials are accepted")
	nc.Close()
}

// The secrets service writes each secret once in the format the binaries read, private to its owner, and never
// replaces one: a second run changes nothing.
func TestComposeSecrets(t *testing.T) {
	t.Parallel()
	f := loadCompose(t)
	secrets := runComposeSecrets(t, f)
	keys := secrets.volumes["keys"]
	require.NotEmpty(t, keys)
	require.NotEmpty(t, secrets.volumes["nats-auth"])
	files := map[string]string{}
	for _, dir := range secrets.volumes {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			st, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s is private", e.Name())
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			files[p] = string(b)
		}
	}
	assert.Len(t, files, 4, "master.key, cluster-token, nats-credentials and nats.conf; no temporary file left")

	key, err := readOrCreateKey(filepath.Join(keys, "master.key"), func([]byte) error { t.Fatal("generated"); return nil })
	require.NoError(t, err)
	assert.Len(t, key, 32)
	token, err := rpc.ReadTokenFile(filepath.Join(keys, "cluster-token"))
	require.NoError(t, err)
	assert.Len(t, token, 64)
	creds, err := ebjs.ReadCredentialsFile(filepath.Join(keys, "nats-credentials"))
	require.NoError(t, err)
	assert.Equal(t, "eventbridge", creds.User)
	assert.NotEqual(t, token, creds.Password)
	conf, err := server.ProcessConfigFile(filepath.Join(secrets.volumes["nats-auth"], "nats.conf"))
	require.NoError(t, err, "nats-server reads the configuration")
	assert.Equal(t, creds.Password, conf.Password)

	// A second start keeps every file as it is.
	svc := f.Services["secrets"]
	script := svc.Command[2]
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		script = strings.ReplaceAll(script, parts[1], secrets.volumes[parts[0]])
	}
	out, err := exec.Command("/bin/sh", "-ec", script).CombinedOutput()
	require.NoError(t, err, "%s", out)
	for p, content := range files {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, content, string(b), "%s is never replaced", p)
	}
}

func TestComposeControlPlane(t *testing.T) {
	t.Parallel()
	f := loadCompose(t)
	secrets := runComposeSecrets(t, f)
	svc := f.Services["eventbridge"]
	require.NotEmpty(t, svc.Command)
	assert.Equal(t, "/usr/local/bin/eventbridge", svc.Command[0])
	c, err := ParseConfig(svc.Command[1:], func(k string) string { return svc.Environment[k] })
	require.NoError(t, err, "the command parses with the control plane's flags")

	// --db: the mysql service, its database, user and password, with parseTime.
	dsn, ok := strings.CutPrefix(c.DSN(), "mysql://")
	require.True(t, ok, "--db %s is MySQL", c.DSN())
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	db := f.Services["mysql"]
	assert.Equal(t, "tcp", cfg.Net)
	assert.Equal(t, "mysql:3306", cfg.Addr)
	assert.Equal(t, db.Environment["MYSQL_DATABASE"], cfg.DBName)
	assert.Equal(t, db.Environment["MYSQL_USER"], cfg.User)
	assert.Equal(t, db.Environment["MYSQL_PASSWORD"], cfg.Passwd)
	assert.True(t, cfg.ParseTime)

	// --nats: the three nodes on their client port.
	var hosts []string
	for _, s := range strings.Split(c.NATS, ",") {
		u, err := url.Parse(s)
		require.NoError(t, err)
		assert.Equal(t, "nats", u.Scheme)
		require.Contains(t, f.Services, u.Hostname())
		assert.Equal(t, strconv.Itoa(natsClientPort(natsOptions(t, f.Services[u.Hostname()], secrets))), u.Port(), s)
		hosts = append(hosts, u.Hostname())
	}
	assert.ElementsMatch(t, composeNATSNodes, hosts)

	// --runtime: both composeWorkers, on the port their --rest-addr listens on, as they announce themselves.
	hosts = nil
	for _, s := range c.RuntimeURLs() {
		u, err := url.Parse(s)
		require.NoError(t, err)
		w, ok := f.Services[u.Hostname()]
		require.True(t, ok, "--runtime %s names no service", s)
		assert.Equal(t, portOf(t, flagValue(w.Command, "rest-addr")), u.Port(), s)
		assert.Equal(t, s, flagValue(w.Command, "advertised-url"), "%s announces the URL the control plane uses", u.Hostname())
		hosts = append(hosts, u.Hostname())
	}
	assert.Equal(t, composeWorkers, hosts)

	// One installation: the same --cluster-id, master key, cluster token and NATS credentials everywhere; three
	// copies of every stream and bucket on the three NATS nodes.
	assert.Equal(t, 3, c.Replicas, "the control plane's streams have a copy on each NATS node")
	for _, name := range composeWorkers {
		cmd := f.Services[name].Command
		assert.Equal(t, "3", flagValue(cmd, "replicas"), name)
		assert.Equal(t, c.ClusterID, flagValue(cmd, "cluster-id"), name)
		assert.Equal(t, c.MasterKey, flagValue(cmd, "master-key"), name)
		assert.Equal(t, c.ClusterTokenFile, flagValue(cmd, "cluster-token-file"), "%s requires the token the control plane sends", name)
		assert.Equal(t, c.NATSCredentialsFile, flagValue(cmd, "nats-credentials-file"), name)
	}
	keys, readOnly := svc.mount("keys")
	require.NotEmpty(t, keys)
	assert.True(t, readOnly, "the control plane only reads the secrets")
	for _, name := range composeWorkers {
		target, ro := f.Services[name].mount("keys")
		assert.Equal(t, keys, target, name)
		assert.True(t, ro, name)
	}

	// The files the flags name are those the secrets service wrote, and hold what the binaries read.
	for flagName, file := range map[string]string{"--master-key": c.MasterKey, "--cluster-token-file": c.ClusterTokenFile,
		"--nats-credentials-file": c.NATSCredentialsFile} {
		require.NotEmpty(t, file, "the control plane has %s", flagName)
		assert.Equal(t, keys, path.Dir(file), "%s is read from the keys volume", flagName)
		_, err := os.Stat(secrets.hostPath(svc, file))
		assert.NoError(t, err, "%s names a file the secrets service writes", flagName)
	}
	_, err = readOrCreateKey(secrets.hostPath(svc, c.MasterKey), func([]byte) error { t.Fatal("generated"); return nil })
	require.NoError(t, err)
	_, err = rpc.ReadTokenFile(secrets.hostPath(svc, c.ClusterTokenFile))
	require.NoError(t, err)
	_, err = ebjs.ReadCredentialsFile(secrets.hostPath(svc, c.NATSCredentialsFile))
	require.NoError(t, err)

	dataDir, _ := svc.mount("eventbridge")
	assert.Equal(t, dataDir, c.DataDir)

	// Listening and publishing: the API on all interfaces of the container, published on its port, checked on
	// /readyz.
	host, httpPort, err := net.SplitHostPort(c.HTTPAddr)
	require.NoError(t, err)
	assert.Equal(t, "0.0.0.0", host, "reachable from outside the container")
	assert.Equal(t, []string{httpPort}, svc.publishedTo())
	u := svc.healthURL(t)
	assert.Equal(t, httpPort, u.Port())
	assert.Equal(t, "/readyz", u.Path)
}

// dockerInstruction is one instruction of a Dockerfile: its keyword (upper case), flags (--from=build) and arguments.
type dockerInstruction struct {
	Keyword string
	Flags   map[string]string
	Args    []string
	Line    string
}

// parseDockerfile reads a Dockerfile: comments and the parser directive skipped, continuation lines joined, and
// each instruction split into keyword, --flags and arguments (JSON arrays decoded for the exec form).
func parseDockerfile(t *testing.T, name string) []dockerInstruction {
	t.Helper()
	file, err := os.Open(name)
	require.NoError(t, err)
	defer file.Close()
	var out []dockerInstruction
	var cur strings.Builder
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if l, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(l + " ")
			continue
		}
		cur.WriteString(line)
		text := cur.String()
		cur.Reset()
		keyword, rest, _ := strings.Cut(text, " ")
		in := dockerInstruction{Keyword: strings.ToUpper(keyword), Flags: map[string]string{}, Line: text}
		rest = strings.TrimSpace(rest)
		for strings.HasPrefix(rest, "--") {
			var fl string
			fl, rest, _ = strings.Cut(rest, " ")
			k, v, _ := strings.Cut(strings.TrimPrefix(fl, "--"), "=")
			in.Flags[k] = v
			rest = strings.TrimSpace(rest)
		}
		if strings.HasPrefix(rest, "[") {
			require.NoError(t, yaml.Unmarshal([]byte(rest), &in.Args), "exec form of %q", text)
		} else {
			in.Args = strings.Fields(rest)
		}
		out = append(out, in)
	}
	require.NoError(t, sc.Err())
	require.Zero(t, cur.Len(), "the Dockerfile ends inside a continued line")
	return out
}

// dockerStage is one FROM and the instructions under it.
type dockerStage struct {
	Name, Base string
	Body       []dockerInstruction
}

func dockerStages(t *testing.T, ins []dockerInstruction) []dockerStage {
	t.Helper()
	var stages []dockerStage
	for _, in := range ins {
		if in.Keyword == "FROM" {
			require.Len(t, in.Args, 3, "FROM <image> AS <name>: %s", in.Line)
			require.Equal(t, "AS", strings.ToUpper(in.Args[1]))
			stages = append(stages, dockerStage{Name: in.Args[2], Base: in.Args[0]})
			continue
		}
		require.NotEmpty(t, stages, "%s before FROM", in.Line)
		stages[len(stages)-1].Body = append(stages[len(stages)-1].Body, in)
	}
	return stages
}

func (s dockerStage) all(keyword string) []dockerInstruction {
	var out []dockerInstruction
	for _, in := range s.Body {
		if in.Keyword == keyword {
			out = append(out, in)
		}
	}
	return out
}

// goBuilds maps each `go build -o OUT PKG` of a stage's RUN instructions to OUT -> PKG.
func (s dockerStage) goBuilds() map[string]string {
	out := map[string]string{}
	for _, run := range s.all("RUN") {
		for _, cmd := range strings.Split(strings.Join(run.Args, " "), "&&") {
			f := strings.Fields(cmd)
			if len(f) < 2 || f[0] != "go" || f[1] != "build" {
				continue
			}
			var o string
			for i := 2; i < len(f); i++ {
				if f[i] == "-o" && i+1 < len(f) {
					o = f[i+1]
					i++
				} else if !strings.HasPrefix(f[i], "-") {
					out[o] = f[i]
				}
			}
		}
	}
	return out
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	stages := dockerStages(t, parseDockerfile(t, "../../Dockerfile"))
	var names []string
	byName := map[string]dockerStage{}
	for _, s := range stages {
		names = append(names, s.Name)
		byName[s.Name] = s
	}
	require.Equal(t, []string{"console", "build", "runtime"}, names)
	f := loadCompose(t)
	assert.Equal(t, names[len(names)-1], f.Services["eventbridge"].Build.Target, "compose builds the last stage")

	// Every COPY --from names an earlier stage.
	for i, s := range stages {
		for _, cp := range s.all("COPY") {
			if from, ok := cp.Flags["from"]; ok {
				assert.Contains(t, names[:i], from, cp.Line)
			}
		}
	}

	// The console stage builds frontend/dist when there is a package.json, and the build stage puts it where
	// frontend/embed.go will embed it.
	console := byName["console"]
	assert.True(t, strings.HasPrefix(console.Base, "node:"), console.Base)
	workdir := console.all("WORKDIR")
	require.Len(t, workdir, 1)
	run := strings.Join(console.all("RUN")[0].Args, " ")
	assert.Contains(t, run, "if [ -f package.json ]")
	assert.Contains(t, run, "npm ci")
	assert.Contains(t, run, "npm run build")
	assert.Contains(t, run, "mkdir -p dist")
	build := byName["build"]
	var distCopied bool
	for _, cp := range build.all("COPY") {
		if cp.Flags["from"] == "console" {
			assert.Equal(t, []string{path.Join(workdir[0].Args[0], "dist"), "./frontend/dist"}, cp.Args)
			distCopied = true
		}
	}
	assert.True(t, distCopied, "the build stage takes the console's dist")

	// The Go stage uses go.mod's Go version and builds both commands.
	gomod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(gomod))
	require.NotNil(t, goVersion)
	assert.True(t, strings.HasPrefix(build.Base, "golang:"+goVersion[1]), "%s builds with Go %s", build.Base, goVersion[1])
	builds := build.goBuilds()
	assert.ElementsMatch(t, []string{"./cmd/eventbridge", "./cmd/worker"}, slices.Collect(maps.Values(builds)))

	// The runtime has the binaries where the compose commands run them, a shell and wget for the health checks
	// and the secrets job, a non-root user, the ports and the data volume.
	runtime := byName["runtime"]
	assert.True(t, strings.HasPrefix(runtime.Base, "alpine:"), "%s has busybox's sh and wget", runtime.Base)
	binaries := map[string]string{} // path in the image -> package
	for _, cp := range runtime.all("COPY") {
		if cp.Flags["from"] != "build" {
			continue
		}
		dest := cp.Args[len(cp.Args)-1]
		for _, src := range cp.Args[:len(cp.Args)-1] {
			require.Contains(t, builds, src, "%s copies what the build stage built", cp.Line)
			binaries[path.Join(dest, path.Base(src))] = builds[src]
		}
	}
	for _, name := range composeOurServices {
		if name == "secrets" {
			continue
		}
		bin := f.Services[name].Command[0]
		require.Contains(t, binaries, bin, "%s runs a binary of the image", name)
		assert.Equal(t, "./cmd/"+path.Base(bin), binaries[bin])
	}
	assert.Equal(t, "/bin/sh", f.Services["secrets"].Command[0])
	user := runtime.all("USER")
	require.Len(t, user, 1)
	uid, _, _ := strings.Cut(user[0].Args[0], ":")
	assert.NotContains(t, []string{"0", "root"}, uid, "the runtime does not run as root")
	var exposed []string
	for _, e := range runtime.all("EXPOSE") {
		exposed = append(exposed, e.Args...)
	}
	for _, name := range composeOurServices {
		for _, p := range f.Services[name].publishedTo() {
			assert.Contains(t, exposed, p, "%s publishes a port the image exposes", name)
		}
	}
	c, err := ParseConfig(f.Services["eventbridge"].Command[1:], func(string) string { return "" })
	require.NoError(t, err)
	var volumes []string
	for _, v := range runtime.all("VOLUME") {
		volumes = append(volumes, v.Args...)
	}
	assert.Equal(t, []string{c.DataDir}, volumes, "the image's data volume is the control plane's --data-dir")
	cmd := runtime.all("CMD")
	require.Len(t, cmd, 1)
	assert.Contains(t, binaries, cmd[0].Args[0])
	_, err = ParseConfig(cmd[0].Args[1:], func(string) string { return "" })
	assert.NoError(t, err, "the image's default command parses")
}

// The helpers above are checked against known input, so a parsing slip cannot make the checks vacuous.
func TestComposeTestHelpers(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "b", flagValue([]string{"--a", "x", "--name", "b"}, "name"))
	assert.Equal(t, "c", flagValue([]string{"-name=c"}, "name"))
	assert.Empty(t, flagValue([]string{"--names", "x"}, "name"))
	dir := t.TempDir()
	df := dir + "/Dockerfile"
	require.NoError(t, os.WriteFile(df, []byte("# syntax=docker/dockerfile:1\nFROM golang:1 AS b\n"+
		"RUN --mount=type=cache,target=/x go build -o /o/a ./cmd/a && \\\n    go build -trimpath -o /o/b ./cmd/b\n"+
		"FROM alpine AS r\nCOPY --from=b /o/a /o/b /bin/\nCMD [\"/bin/a\", \"--x\"]\n"), 0o600))
	stages := dockerStages(t, parseDockerfile(t, df))
	require.Len(t, stages, 2)
	assert.Equal(t, map[string]string{"/o/a": "./cmd/a", "/o/b": "./cmd/b"}, stages[0].goBuilds())
	assert.Equal(t, "type=cache,target=/x", stages[0].Body[0].Flags["mount"])
	assert.Equal(t, dockerInstruction{Keyword: "COPY", Flags: map[string]string{"from": "b"}, Args: []string{"/o/a", "/o/b", "/bin/"},
		Line: "COPY --from=b /o/a /o/b /bin/"}, stages[1].Body[0])
	assert.Equal(t, []string{"/bin/a", "--x"}, stages[1].Body[1].Args)
	assert.Equal(t, []string{"8080", "8083"}, composeService{Ports: []string{"127.0.0.1:8080:8080", "8083/tcp"}}.publishedTo())
}
