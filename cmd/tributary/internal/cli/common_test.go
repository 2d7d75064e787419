package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// runResult is the outcome of running a command line in-process.
type runResult struct {
	code   int
	stderr string
	stdout string
}

// testEnv is an Env whose environment variables are vars only, writing to
// stdout and stderr.
func testEnv(vars map[string]string, stdout, stderr io.Writer) *Env {
	return &Env{
		Getenv: func(key string) string { return vars[key] },
		Logger: slog.New(slog.DiscardHandler),
		Stderr: stderr,
		Stdout: stdout,
	}
}

// runCLI runs args against the registered commands, with environment
// variables from vars only.
func runCLI(t *testing.T, vars map[string]string, args ...string) runResult {
	t.Helper()

	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, testEnv(vars, &stdout, &stderr))
	return runResult{code: code, stderr: stderr.String(), stdout: stdout.String()}
}

// noDatabaseURL is what a command that needs a database says without one.
const noDatabaseURL = "tributary: no database URL given; pass --database-url or set DATABASE_URL, e.g. DATABASE_URL=postgres://user:password@localhost:5432/app"

// migratedDB returns a schema of its own with River's and Tributary's
// tables, and the environment that selects it.
func migratedDB(t *testing.T) (*testdb.DB, map[string]string) {
	t.Helper()

	db := testdb.New(t)
	return db, dbVars(db)
}

// dbVars is the environment that selects db: DATABASE_URL and
// TRIBUTARY_SCHEMA.
func dbVars(db *testdb.DB) map[string]string {
	return map[string]string{"DATABASE_URL": db.URL, "TRIBUTARY_SCHEMA": db.Schema}
}

// requireFailed checks that a command failed with code and printed one
// line, stderr, and nothing on stdout. A stderr starting with "re:" is a
// regular expression the line (without its newline) must match.
func requireFailed(t *testing.T, res runResult, code int, stderr string) {
	t.Helper()

	require.Equal(t, code, res.code, res.stderr)
	require.Empty(t, res.stdout)
	if pattern, ok := strings.CutPrefix(stderr, "re:"); ok {
		require.Regexp(t, pattern, strings.TrimSuffix(res.stderr, "\n"))
		require.Equal(t, 1, strings.Count(res.stderr, "\n"), res.stderr)
		return
	}
	require.Equal(t, stderr+"\n", res.stderr)
}

// failureCase is a command line that must fail (see requireFailed).
type failureCase struct {
	name   string
	vars   map[string]string
	args   []string
	code   int
	stderr string
}

// runFailureCases runs each case, with prefix before its arguments, as a
// parallel subtest.
func runFailureCases(t *testing.T, prefix []string, cases []failureCase) {
	t.Helper()

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			res := runCLI(t, tc.vars, append(slices.Clone(prefix), tc.args...)...)
			requireFailed(t, res, tc.code, tc.stderr)
		})
	}
}

// requireSameHelp checks that args, which end in --help or -h after a
// command's arguments, print the same help as want, the command's own
// --help.
func requireSameHelp(t *testing.T, want runResult, args ...string) {
	t.Helper()

	got := runCLI(t, nil, args...)
	require.Equal(t, ExitOK, got.code, got.stderr)
	require.Empty(t, got.stderr)
	require.Equal(t, want.stdout, got.stdout)
}

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads. When pause is set, the first write after which the buffer matches
// it sends the match on paused and then waits for resume: the command
// stops there, at a known point, while the test looks around.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer

	pause   *regexp.Regexp
	paused  chan []string
	resume  chan struct{}
	matched bool
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	var match []string
	if b.pause != nil && !b.matched {
		if match = b.pause.FindStringSubmatch(b.buf.String()); match != nil {
			b.matched = true
		}
	}
	b.mu.Unlock()

	if match != nil {
		b.paused <- match
		<-b.resume
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// background is a command running in the background, such as serve or
// demo.
type background struct {
	cancel context.CancelFunc
	exited chan int
	stderr *syncBuffer
	stdout *syncBuffer

	resumeOnce sync.Once
}

// startCLI runs args in the background until the test cancels it or the
// test ends. Its stdout pauses at the first match of pause (see
// syncBuffer) until Resume.
func startCLI(t *testing.T, vars map[string]string, pause *regexp.Regexp, args ...string) *background {
	t.Helper()

	ctx, cancel := context.WithCancel(context.Background())
	bg := &background{
		cancel: cancel,
		exited: make(chan int, 1),
		stderr: &syncBuffer{},
		stdout: &syncBuffer{pause: pause, paused: make(chan []string, 1), resume: make(chan struct{})},
	}
	go func() { bg.exited <- Main(ctx, args, testEnv(vars, bg.stdout, bg.stderr)) }()
	t.Cleanup(func() {
		bg.Resume()
		cancel()
		bg.wait(t)
	})
	return bg
}

// Paused waits for the command to pause at its pause pattern and returns
// the match, failing the test when it exits first.
func (bg *background) Paused(t *testing.T) []string {
	t.Helper()

	select {
	case match := <-bg.stdout.paused:
		return match
	case code := <-bg.exited:
		bg.exited <- code
		t.Fatalf("exited with %d before printing %s:\nstdout:\n%s\nstderr:\n%s", code, bg.stdout.pause, bg.stdout.String(), bg.stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("did not print %s within a minute:\nstdout:\n%s", bg.stdout.pause, bg.stdout.String())
	}
	return nil
}

// Resume lets a paused command go on.
func (bg *background) Resume() { bg.resumeOnce.Do(func() { close(bg.stdout.resume) }) }

// Stop cancels the command's context (SIGINT or SIGTERM in a real
// process) and returns its exit code.
func (bg *background) Stop(t *testing.T) int {
	t.Helper()

	// Cancelled before a paused write is let go, the command sees the
	// stop at its next check, not after whatever it would do first.
	bg.cancel()
	bg.Resume()
	return bg.wait(t)
}

// wait returns the command's exit code, failing the test when it does not
// exit within a minute.
func (bg *background) wait(t *testing.T) int {
	t.Helper()

	select {
	case code := <-bg.exited:
		bg.exited <- code // for later calls
		return code
	case <-time.After(time.Minute):
		t.Fatalf("did not exit within a minute:\nstdout:\n%s", bg.stdout.String())
		return 0
	}
}

// httpGet sends GET url with an Authorization header when auth is set,
// and returns the status code and body.
func httpGet(t *testing.T, url, auth string) (int, string) {
	t.Helper()

	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// withoutNoWorkerWarning is stderr without the warning that no live worker
// serves a workflow type, which creating a schedule or starting a run
// prints when no working client runs (as in most of these tests).
func withoutNoWorkerWarning(stderr string) string {
	var kept []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, "tributary: warning: no live worker serves workflow type ") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}
