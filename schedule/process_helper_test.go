package schedule

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/workflow"
)

// Environment of the worker helper process (TestWorkerHelperProcess).
const (
	workerHelperEnv = "TRIBUTARY_WORKER_HELPER" // "1" in the helper process only
	workerDBURLEnv  = "TRIBUTARY_WORKER_DB_URL"
	workerSchemaEnv = "TRIBUTARY_WORKER_SCHEMA"
)

// workerStartedPrefix starts the line a worker helper prints on stdout once
// its client has started; the River client's ID follows it.
const workerStartedPrefix = "worker helper: started, client ID "

// Warnings of a working client that mean a live client was taken for dead:
// the one that rescues logs the first, the one rescued from the second
// (internal/wfruntime/registry.go).
const (
	clientDiedLog = "tributary: A client died"
	rowGoneLog    = "tributary: This client's worker registry row is gone"
)

// TestWorkerHelperProcess is a working client of the failover and
// cut-connection tests, in a process of its own: the test binary
// re-executed. It works failoverFlow and tick, and the schedule queue, on a
// pool connected with TRIBUTARY_WORKER_DB_URL, logs to stderr, prints its
// River client's ID, and stops cleanly when its stdin closes (the parent
// closes it at the end of the test; an orphan's closes when the parent
// dies). Run any other way, it returns at once: it is only the helper's
// entry point.
func TestWorkerHelperProcess(t *testing.T) {
	t.Parallel()
	if os.Getenv(workerHelperEnv) != "1" {
		return
	}
	startCtx, cancel := context.WithTimeout(context.Background(), time.Minute) // for the start only
	defer cancel()
	pool, err := pgxpool.New(startCtx, os.Getenv(workerDBURLEnv))
	require.NoError(t, err)
	defer pool.Close()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	wf, err := workflow.NewClient(pool, &workflow.Config{
		Logger: logger,
		River: &river.Config{
			Logger:   logger,
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
			TestOnly: true,
		},
		Schema:    os.Getenv(workerSchemaEnv),
		Workflows: []workflow.Registrable{tick, failoverFlow},
	})
	require.NoError(t, err)
	_, err = New(wf, &Config{Logger: logger})
	require.NoError(t, err)
	require.NoError(t, wf.Start(startCtx))
	fmt.Println(workerStartedPrefix + wf.River().ID())

	_, _ = io.Copy(io.Discard, os.Stdin)
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer stopCancel()
	if err := wf.Stop(stopCtx); err != nil {
		logger.Warn("worker helper: stop", slog.String("err", err.Error()))
	}
}

// workerProcess is a running worker helper process.
type workerProcess struct {
	name     string // for the test's messages: "worker 1"
	app      string // the application_name its connections carry
	clientID string // its River client's ID

	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	exited         chan struct{}
}

// startWorkerProcesses starts a worker helper process per application
// name in apps, each on connString (one host, or several with
// target_session_attrs) with that application_name, working schema ("" for
// the connection's search path), and returns once each has printed its
// client ID. The processes stop when the test ends: stdin closed, then
// killed if they have not exited within 20 s.
func startWorkerProcesses(t *testing.T, connString, schema string, apps ...string) []*workerProcess {
	t.Helper()
	workers := make([]*workerProcess, len(apps))
	for i, app := range apps {
		workers[i] = startWorkerProcess(t, fmt.Sprintf("worker %d", i+1), app, connString, schema)
	}
	for _, w := range workers {
		w.waitStarted(t)
	}
	return workers
}

func startWorkerProcess(t *testing.T, name, app, connString, schema string) *workerProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWorkerHelperProcess$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), workerHelperEnv+"=1", workerDBURLEnv+"="+withApplicationName(connString, app), workerSchemaEnv+"="+schema)
	w := &workerProcess{name: name, app: app, cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w.stdout, w.stderr
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-w.exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-w.exited
		}
		cancel()
		if t.Failed() {
			t.Logf("%s (%s) stderr, last lines:\n%s", w.name, w.clientID, lastLines(w.stderr.String(), 60))
		}
	})
	return w
}

// waitStarted waits until the process printed its client ID, failing if it
// exits first or does not print it within 30 s.
func (w *workerProcess) waitStarted(t *testing.T) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for !w.readClientID() {
		select {
		case <-w.stdout.Written():
		case <-w.exited:
			if !w.readClientID() { // its last words were copied before it was reaped
				t.Fatalf("%s exited before it started; stdout:\n%s\nstderr:\n%s", w.name, w.stdout.String(), w.stderr.String())
			}
		case <-deadline.C:
			t.Fatalf("%s did not start within 30s; stderr:\n%s", w.name, w.stderr.String())
		}
	}
}

// readClientID sets clientID from the process's output, and reports
// whether it had printed it.
func (w *workerProcess) readClientID() bool {
	_, rest, ok := bytes.Cut(w.stdout.Bytes(), []byte(workerStartedPrefix))
	if !ok {
		return false
	}
	id, _, ok := bytes.Cut(rest, []byte("\n"))
	w.clientID = string(id)
	return ok
}

// takenForDead returns the lines in which a worker process logged that it
// took a client for dead, or that it was taken for dead itself.
func takenForDead(workers []*workerProcess) []string {
	var lines []string
	for _, w := range workers {
		for line := range strings.Lines(w.stderr.String()) {
			if strings.Contains(line, clientDiedLog) || strings.Contains(line, rowGoneLog) {
				lines = append(lines, w.name+": "+strings.TrimSpace(line))
			}
		}
	}
	return lines
}

// requireNoneTakenForDead fails the test when a worker process logged that
// it took a client for dead or was taken for dead itself: every worker
// process lives throughout.
func requireNoneTakenForDead(t *testing.T, workers []*workerProcess) {
	t.Helper()
	require.Empty(t, takenForDead(workers), "a live worker process was taken for dead")
}

// withApplicationName adds application_name=app to a URL connection string.
func withApplicationName(connString, app string) string {
	sep := "?"
	if strings.Contains(connString, "?") {
		sep = "&"
	}
	return connString + sep + "application_name=" + url.QueryEscape(app)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "")
}

// startFailoverApp starts the application of the failover and
// cut-connection tests in this process: an insert-only client (it
// registers no workflow) on a pool of its own connected with connString,
// working schema, which starts runs and awaits their Results, and the
// every-second schedule of tick it creates, which the worker processes
// fire. The client stops when the test ends.
func startFailoverApp(ctx context.Context, t *testing.T, connString, schema string) (*workflow.Client, *Schedule) {
	t.Helper()
	pool, err := pgxpool.New(ctx, withApplicationName(connString, "tributary-app"))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	app, err := workflow.NewClient(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = app.Stop(ctx)
	})
	schedules, err := New(app, nil)
	require.NoError(t, err)
	s, err := schedules.Create(ctx, &Params{Name: "every second", Key: "ticker", Workflow: "tick", Cron: "* * * * * *", Overlap: OverlapAllow})
	require.NoError(t, err)
	return app, s
}

// What a worker process's backend is, as backendWatch tells them apart.
const (
	registrySession = "registry session"     // holds the liveness lock of its process's registry row
	riverNotifier   = "River's notifier"     // LISTENs on River's channels (insert, leadership, control)
	wakeListener    = "Tributary's listener" // LISTENs on tributary_wake_…: wake-ups and repairs
	poolConnection  = "pool connection"
)

// backendKey names a backend: its pid, and its start, since pids are
// reused.
type backendKey struct {
	pid   int
	start time.Time
}

// workerBackend is a backend of a worker process.
type workerBackend struct {
	backendKey
	worker *workerProcess
	kind   string // registrySession, riverNotifier, wakeListener or poolConnection
}

// backendWatch tells the backends of the worker processes apart on one
// server, by their application_name and what pg_stat_activity and pg_locks
// show of them:
//
//   - the registry's session holds the session advisory lock whose key
//     (lock_key) its process's row in tributary_workers names;
//   - River's notifier and Tributary's listener each LISTEN on a
//     connection of their own, and pg_stat_activity shows the LISTEN as
//     the backend's query only until the listener first pings its
//     connection, 5 s later (River pings every 5 s; Tributary after 5 s
//     without a notification), when it reads "-- ping". The watch
//     remembers each backend it saw LISTEN, so it must look within 5 s of
//     each connection. (A worker process does not await Results, so it
//     has no listener of finished runs.)
//   - every other backend is one of its pool's connections.
type backendWatch struct {
	pool    *pgxpool.Pool
	workers []*workerProcess

	mu      sync.Mutex
	listens map[backendKey]string // backends seen to LISTEN: riverNotifier or wakeListener
}

func newBackendWatch(pool *pgxpool.Pool, workers []*workerProcess) *backendWatch {
	return &backendWatch{pool: pool, workers: workers, listens: map[backendKey]string{}}
}

// backends returns the worker processes' backends now.
func (bw *backendWatch) backends(ctx context.Context) ([]workerBackend, error) {
	byApp := map[string]*workerProcess{}
	apps := make([]string, len(bw.workers))
	for i, w := range bw.workers {
		byApp[w.app], apps[i] = w, w.app
	}
	rows, err := bw.pool.Query(ctx, `SELECT a.pid, a.backend_start, a.application_name, coalesce(a.query, ''),
			coalesce((SELECT r.client_id FROM pg_locks l JOIN tributary_workers r ON ((l.classid::int8 << 32) | l.objid::int8) = r.lock_key
				WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 LIMIT 1), '')
		FROM pg_stat_activity a WHERE a.application_name = ANY($1)`, apps)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	bw.mu.Lock()
	defer bw.mu.Unlock()
	var backends []workerBackend
	live := map[backendKey]bool{}
	for rows.Next() {
		var (
			b                  workerBackend
			app, query, locker string
		)
		if err := rows.Scan(&b.pid, &b.start, &app, &query, &locker); err != nil {
			return nil, err
		}
		b.worker = byApp[app]
		live[b.backendKey] = true
		switch {
		case locker == b.worker.clientID:
			b.kind = registrySession
		case strings.HasPrefix(query, "LISTEN ") && strings.Contains(query, "tributary_wake_"):
			bw.listens[b.backendKey] = wakeListener
		case strings.HasPrefix(query, "LISTEN ") && strings.Contains(query, "river_"):
			bw.listens[b.backendKey] = riverNotifier
		}
		if b.kind == "" {
			b.kind = bw.listens[b.backendKey]
		}
		if b.kind == "" {
			b.kind = poolConnection
		}
		backends = append(backends, b)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for key := range bw.listens {
		if !live[key] {
			delete(bw.listens, key)
		}
	}
	return backends, nil
}

// has reports whether worker w has a backend of kind now.
func (bw *backendWatch) has(ctx context.Context, w *workerProcess, kind string) bool {
	backends, err := bw.backends(ctx)
	if err != nil {
		return false
	}
	for _, b := range backends {
		if b.worker == w && b.kind == kind {
			return true
		}
	}
	return false
}

// pick returns a backend of worker w of kind at random, else any backend
// of w, else false.
func pick(backends []workerBackend, w *workerProcess, kind string) (workerBackend, bool) {
	var ofKind, ofWorker []workerBackend
	for _, b := range backends {
		if b.worker != w {
			continue
		}
		ofWorker = append(ofWorker, b)
		if b.kind == kind {
			ofKind = append(ofKind, b)
		}
	}
	for _, set := range [][]workerBackend{ofKind, ofWorker} {
		if len(set) > 0 {
			return set[rand.IntN(len(set))], true
		}
	}
	return workerBackend{}, false
}

// riverLeaderTTL is how far ahead River sets river_leader.expires_at at
// each election and re-election (its ElectInterval, 5 s, plus 10 s of
// padding): a row that expires more than riverLeaderTTL after a moment was
// written after it.
const riverLeaderTTL = 15 * time.Second

// recoveryCheck is one component's recovery: ok reports whether it works
// again.
type recoveryCheck struct {
	name string
	ok   func(ctx context.Context) bool
}

// recoveryChecks are the checks that every component of each worker
// process works on the watch's server after since (a promotion, the last
// of the kills):
//
//   - its worker registry: its row has a heartbeat after since, and its
//     registry session holds the liveness lock the row names;
//   - River's producer: a job it completed after since (the last of the
//     job's attempted_by is its client ID);
//   - River's notifier and Tributary's listener: a backend of its that
//     LISTENs on their channels (backendWatch);
//
// and River's leader election: a river_leader row written after since that
// names one of the worker processes.
func (bw *backendWatch) recoveryChecks(since time.Time) []recoveryCheck {
	var checks []recoveryCheck
	ids := make([]string, len(bw.workers))
	for i, w := range bw.workers {
		ids[i] = w.clientID
		checks = append(checks,
			recoveryCheck{w.name + " " + registrySession, func(ctx context.Context) bool {
				var ok bool
				err := bw.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tributary_workers r
					WHERE r.client_id = $1 AND r.heartbeat_at > $2 AND EXISTS (
						SELECT 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
						WHERE a.application_name = $3 AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
							AND ((l.classid::int8 << 32) | l.objid::int8) = r.lock_key))`, w.clientID, since, w.app).Scan(&ok)
				return err == nil && ok
			}},
			recoveryCheck{w.name + " River's producer", func(ctx context.Context) bool {
				var ok bool
				err := bw.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job
					WHERE state = 'completed' AND finalized_at > $2 AND attempted_by[cardinality(attempted_by)] = $1)`, w.clientID, since).Scan(&ok)
				return err == nil && ok
			}},
			recoveryCheck{w.name + " " + riverNotifier, func(ctx context.Context) bool { return bw.has(ctx, w, riverNotifier) }},
			recoveryCheck{w.name + " " + wakeListener, func(ctx context.Context) bool { return bw.has(ctx, w, wakeListener) }},
		)
	}
	checks = append(checks, recoveryCheck{"River's leader", func(ctx context.Context) bool {
		var ok bool
		err := bw.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM river_leader WHERE leader_id = ANY($1) AND expires_at > $2)",
			ids, since.Add(riverLeaderTTL)).Scan(&ok)
		return err == nil && ok
	}})
	return checks
}

// waitRecovered waits (pollFor) until every check holds, and returns how
// long after since each was first seen to hold. It logs the checks that
// never did.
func waitRecovered(t *testing.T, what string, since time.Time, checks []recoveryCheck) map[string]time.Duration {
	t.Helper()
	seen := map[string]time.Duration{}
	defer func() {
		if t.Failed() {
			for _, c := range checks {
				if _, ok := seen[c.name]; !ok {
					t.Logf("not recovered: %s", c.name)
				}
			}
		}
	}()
	pollFor(t, what, func(ctx context.Context) bool {
		for _, c := range checks {
			if _, ok := seen[c.name]; !ok && c.ok(ctx) {
				seen[c.name] = time.Since(since)
			}
		}
		return len(seen) == len(checks)
	})
	return seen
}

// formatRecovery lists the checks' recovery times, in their order.
func formatRecovery(checks []recoveryCheck, seen map[string]time.Duration) string {
	parts := make([]string, len(checks))
	for i, c := range checks {
		parts[i] = fmt.Sprintf("%s %s", c.name, seen[c.name].Round(10*time.Millisecond))
	}
	return strings.Join(parts, ", ")
}
