package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
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

func TestServe(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	vars := map[string]string{"DATABASE_URL": db.URL, "TRIBUTARY_SCHEMA": db.Schema, "TRIBUTARY_TOKEN": "s3cret"}
	createSchedule(t, vars, "--name", "nightly", "--cron", "0 2 * * *", "--workflow", "report")

	var stdout, stderr syncBuffer
	env := &Env{
		Getenv: func(key string) string { return vars[key] },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Stderr: &stderr,
		Stdout: &stdout,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exited := make(chan int, 1)
	go func() { exited <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--queues", "default=2"}, env) }()

	// The URLs are printed once the server listens.
	dashboardRE := regexp.MustCompile(`Dashboard: (http://127\.0\.0\.1:\d+)/\n`)
	var base string
	require.Eventually(t, func() bool {
		select {
		case code := <-exited:
			t.Fatalf("serve exited with %d before serving: %s", code, stderr.String())
		default:
		}
		if m := dashboardRE.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
			return true
		}
		return false
	}, 30*time.Second, 10*time.Millisecond)
	require.Contains(t, stdout.String(), "River UI:  "+base+"/riverui/\n")

	get := func(auth string) (int, []byte) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/schedules", nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, body
	}

	status, _ := get("")
	require.Equal(t, http.StatusUnauthorized, status)
	status, body := get("Bearer s3cret")
	require.Equal(t, http.StatusOK, status, string(body))
	var list struct {
		Schedules []struct {
			Name string `json:"name"`
		} `json:"schedules"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list.Schedules, 1)
	require.Equal(t, "nightly", list.Schedules[0].Name)

	cancel()
	select {
	case code := <-exited:
		require.Equal(t, ExitOK, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit after its context was cancelled")
	}
	require.Contains(t, stdout.String(), "Stopped.\n")
	require.Empty(t, stderr.String())
}

func TestServeNotMigrated(t *testing.T) {
	t.Parallel()

	db := testdb.NewEmpty(t)
	res := runCLI(t, map[string]string{"DATABASE_URL": db.URL, "TRIBUTARY_SCHEMA": db.Schema}, "serve", "--addr", "127.0.0.1:0")
	require.Equal(t, ExitError, res.code)
	require.Contains(t, res.stderr, "run 'tributary migrate up'")
}

func TestParseQueues(t *testing.T) {
	t.Parallel()

	queues, err := parseQueues("default=20, reports=5")
	require.NoError(t, err)
	require.Equal(t, 20, queues["default"].MaxWorkers)
	require.Equal(t, 5, queues["reports"].MaxWorkers)

	for _, bad := range []string{"", "default", "default=0", "=3", "default=x", "a=1,a=2"} {
		_, err := parseQueues(bad)
		require.Error(t, err, bad)
	}
}
