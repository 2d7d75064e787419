package schedule

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Environment of the key helper process (TestKeyHelperProcess).
const (
	keyHelperEnv  = "TRIBUTARY_KEY_HELPER" // its job: "create" or "declare"; set in the helper only
	keyDBURLEnv   = "TRIBUTARY_KEY_DB_URL"
	keySchemaEnv  = "TRIBUTARY_KEY_SCHEMA"
	keyGateEnv    = "TRIBUTARY_KEY_GATE"    // the advisory lock the parent holds until every helper waits on it
	keyCronEnv    = "TRIBUTARY_KEY_CRON"    // create: the schedule's cron
	keyVersionEnv = "TRIBUTARY_KEY_VERSION" // declare: the deploy, 1 or 2 (rollingDecl)
)

// keyResultPrefix starts the helper's one line of result on stdout.
const keyResultPrefix = "KEY RESULT "

// keyResult is what a helper did: Create's schedule, or Declare's result,
// or the error.
type keyResult struct {
	Schedule *Schedule      `json:"schedule,omitempty"`
	Declared *DeclareResult `json:"declared,omitempty"`
	Error    string         `json:"error,omitempty"`
	Conflict bool           `json:"conflict,omitempty"`
}

// rollingDecl is service "reports" as deploy version 1 or 2 declares it:
// version 2 moves the nightly report from 02:00 to 03:00, keeps the weekly
// one, drops "old-report" and adds "new-report".
func rollingDecl(version int64) *Declaration {
	d := &Declaration{Service: "reports", Version: version}
	add := func(key, cron string) {
		d.Schedules = append(d.Schedules, &Params{Name: key, Key: key, Workflow: "tick", Cron: cron, TimeZone: "Europe/Paris"})
	}
	switch version {
	case 1:
		add("nightly-report", "0 2 * * *")
		add("weekly", "0 9 * * 1")
		add("old-report", "0 4 * * *")
	case 2:
		add("nightly-report", "0 3 * * *")
		add("weekly", "0 9 * * 1")
		add("new-report", "0 5 * * *")
	}
	return d
}

// TestKeyHelperProcess is a process of TestCreateByKeyRacingProcesses and
// TestDeclareRollingDeployProcesses: the test binary re-executed, a client
// of its own that waits at the parent's gate, then creates a keyed
// schedule or declares service "reports", and prints what it got. Run any
// other way, it returns at once.
func TestKeyHelperProcess(t *testing.T) {
	t.Parallel()
	job := os.Getenv(keyHelperEnv)
	if job == "" {
		return
	}
	// An orphan gives up with its context: it only waits at the gate and
	// makes one call.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, os.Getenv(keyDBURLEnv))
	require.NoError(t, err)
	defer pool.Close()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	wf, err := workflow.NewClient(pool, &workflow.Config{Logger: logger, Schema: os.Getenv(keySchemaEnv)})
	require.NoError(t, err)
	sc, err := New(wf, &Config{Logger: logger})
	require.NoError(t, err)

	// Everything is ready: wait at the gate with the others.
	gate, err := strconv.ParseInt(os.Getenv(keyGateEnv), 10, 64)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "SELECT pg_advisory_lock_shared($1), pg_advisory_unlock_shared($1)", gate)
	require.NoError(t, err)

	var res keyResult
	switch job {
	case "create":
		p := keyed("acme", "nightly-report")
		p.Cron = os.Getenv(keyCronEnv)
		res.Schedule, err = sc.Create(ctx, p)
	case "declare":
		version, perr := strconv.ParseInt(os.Getenv(keyVersionEnv), 10, 64)
		require.NoError(t, perr)
		res.Declared, err = sc.Declare(ctx, rollingDecl(version))
	default:
		t.Fatalf("key helper: unknown job %q", job)
	}
	if err != nil {
		res.Error, res.Conflict = err.Error(), errors.Is(err, ErrKeyConflict)
	}
	line, err := json.Marshal(res)
	require.NoError(t, err)
	fmt.Println(keyResultPrefix + string(line))
}

// keyJob is one helper process to run: its job and its environment.
type keyJob struct {
	job string
	env []string
}

// runKeyHelpers starts a helper process per job, waits until all of them
// wait at the gate (a Postgres advisory lock this process holds), opens
// the gate so that they act at once, and returns their results in the
// order of jobs.
func runKeyHelpers(t *testing.T, db *testdb.DB, jobs []keyJob) []keyResult {
	t.Helper()
	ctx := ctxT(t, 2*time.Minute)
	gate := rand.Int64N(1<<31-1) + 1 // low bits only: pg_locks shows it as objid
	conn, err := db.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SELECT pg_advisory_lock($1)", gate)
	require.NoError(t, err)
	locked := true
	defer func() {
		if locked {
			_, _ = conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", gate)
		}
	}()

	type child struct {
		cmd      *exec.Cmd
		out, err bytes.Buffer
		done     chan error
	}
	children := make([]*child, len(jobs))
	for i, j := range jobs {
		c := &child{done: make(chan error, 1)}
		c.cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKeyHelperProcess$", "-test.count=1", "-test.timeout=2m")
		c.cmd.Env = append(os.Environ(), append([]string{
			keyHelperEnv + "=" + j.job, keyDBURLEnv + "=" + db.URL, keySchemaEnv + "=" + db.Schema,
			keyGateEnv + "=" + strconv.FormatInt(gate, 10),
		}, j.env...)...)
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.err
		c.cmd.WaitDelay = 5 * time.Second
		require.NoError(t, c.cmd.Start())
		t.Cleanup(func() { _ = c.cmd.Process.Kill() })
		go func() { c.done <- c.cmd.Wait() }()
		children[i] = c
	}

	// Open the gate once every helper waits at it (Postgres tells of no
	// lock wait, so pg_locks is polled).
	pollFor(t, "every helper to wait at the gate", func(ctx context.Context) bool {
		var waiting int
		err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND classid = 0 AND objid = $1 AND NOT granted`, gate).Scan(&waiting)
		return err == nil && waiting == len(jobs)
	})
	_, err = conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", gate)
	require.NoError(t, err)
	locked = false

	out := make([]keyResult, len(jobs))
	for i, c := range children {
		select {
		case err := <-c.done:
			require.NoError(t, err, "helper %d (%s): %s", i, jobs[i].job, c.err.String())
		case <-ctx.Done():
			t.Fatalf("helper %d (%s) did not finish: %s", i, jobs[i].job, c.err.String())
		}
		found := false
		scanner := bufio.NewScanner(&c.out)
		for scanner.Scan() {
			if line, ok := strings.CutPrefix(scanner.Text(), keyResultPrefix); ok {
				require.NoError(t, json.Unmarshal([]byte(line), &out[i]))
				found = true
			}
		}
		require.True(t, found, "helper %d printed no result: %s", i, c.err.String())
	}
	return out
}

// TestCreateByKeyRacingProcesses: eight processes create one key at the
// same instant, half of them with another spec: exactly one schedule is
// made, every process with its spec gets it back, the others get a
// *KeyConflictError.
func TestCreateByKeyRacingProcesses(t *testing.T) {
	t.Parallel()
	testdb.ManyConnections(t)

	db := testdb.New(t)
	var jobs []keyJob
	for i := range 8 {
		cron := "0 2 * * *"
		if i%2 == 1 {
			cron = "0 3 * * *"
		}
		jobs = append(jobs, keyJob{job: "create", env: []string{keyCronEnv + "=" + cron}})
	}
	results := runKeyHelpers(t, db, jobs)

	require.Equal(t, 1, countOf(t, db, "SELECT count(*) FROM schedules"))
	var cron string
	require.NoError(t, db.Pool.QueryRow(ctxT(t, 10*time.Second), "SELECT cron FROM schedules").Scan(&cron))
	created := 0
	for i, r := range results {
		if jobs[i].env[0] != keyCronEnv+"="+cron {
			require.True(t, r.Conflict, "helper %d with the losing spec: %+v", i, r)
			require.Contains(t, r.Error, `Cron "`+cron+`" → "`)
			continue
		}
		require.Empty(t, r.Error, "helper %d", i)
		require.Equal(t, cron, r.Schedule.Cron)
		if !r.Schedule.Existing {
			created++
		}
	}
	require.Equal(t, 1, created, "one process made it, the others found it")
	t.Logf("the winning spec: cron %q", cron)
}

// TestDeclareRollingDeployProcesses deploys service "reports" as processes
// do. Three replicas of version 1 start at once: one schedule per key, one
// process creates each. Then a rolling deploy: three replicas of version 2
// start while three of version 1 restart, all at the same instant: the
// end state is version 2's, with no duplicate, and no schedule flaps:
// exactly one process updates it to version 2's spec and no version 1
// process changes anything, before or after (it finds version 1's spec in
// place, or is superseded). A version 1 replica restarting after the
// deploy changes nothing.
func TestDeclareRollingDeployProcesses(t *testing.T) {
	t.Parallel()
	testdb.ManyConnections(t)

	db := testdb.New(t)
	deploy := func(versions ...int64) []keyResult {
		var jobs []keyJob
		for _, v := range versions {
			jobs = append(jobs, keyJob{job: "declare", env: []string{keyVersionEnv + "=" + strconv.FormatInt(v, 10)}})
		}
		results := runKeyHelpers(t, db, jobs)
		for i, r := range results {
			require.Empty(t, r.Error, "helper %d", i)
			require.Equal(t, versions[i], r.Declared.Version)
		}
		return results
	}
	// changes counts the decisions other than "unchanged", by their
	// String, over results.
	changes := func(results []keyResult) map[string]int {
		out := map[string]int{}
		for _, r := range results {
			for _, d := range r.Declared.Decisions {
				if d.Action != DeclareUnchanged {
					out[d.String()]++
				}
			}
		}
		return out
	}
	state := func() map[string]string {
		rows, err := db.Pool.Query(ctxT(t, 10*time.Second), "SELECT key, cron, paused FROM schedules ORDER BY key")
		require.NoError(t, err)
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var key, cron string
			var paused bool
			require.NoError(t, rows.Scan(&key, &cron, &paused))
			_, dup := out[key]
			require.False(t, dup, "two schedules with key %s", key)
			out[key] = fmt.Sprintf("%s paused=%t", cron, paused)
		}
		require.NoError(t, rows.Err())
		return out
	}

	first := deploy(1, 1, 1)
	require.Equal(t, map[string]int{"created nightly-report": 1, "created weekly": 1, "created old-report": 1}, changes(first))
	v1 := map[string]string{"nightly-report": "0 2 * * * paused=false", "weekly": "0 9 * * 1 paused=false", "old-report": "0 4 * * * paused=false"}
	require.Equal(t, v1, state())

	rolling := deploy(2, 1, 2, 1, 2, 1)
	v2 := map[string]string{
		"nightly-report": "0 3 * * * paused=false", "weekly": "0 9 * * 1 paused=false",
		"old-report": "0 4 * * * paused=true", "new-report": "0 5 * * * paused=false",
	}
	require.Equal(t, v2, state())
	require.Equal(t, map[string]int{
		`updated nightly-report: Cron "0 2 * * *" → "0 3 * * *"`: 1, "created new-report": 1, "paused old-report": 1,
	}, changes(rolling), "each change made once, by a version 2 replica")
	superseded := 0
	for i, r := range rolling {
		if r.Declared.Version == 1 {
			require.Empty(t, changes([]keyResult{r}), "version 1 replica %d changed something", i)
			if r.Declared.Superseded {
				superseded++
			}
		}
	}
	t.Logf("of the 3 version 1 replicas in the rolling deploy, %d came after version 2 and were superseded", superseded)

	late := deploy(1)
	require.True(t, late[0].Declared.Superseded)
	require.Equal(t, v2, state())
}
