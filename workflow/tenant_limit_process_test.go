package workflow

// TestTenantLimitUnderKills proves DefineOpts.TenantLimit with worker
// PROCESSES (the test binary re-executed as TestTenantLimitHelperProcess),
// two of which are SIGKILLed mid-step: never more than the limit of a
// tenant's runs work at once, and every run completes.
//
// Working is measured by the step itself, not by Tributary's counters: the
// one step of each run writes its start to limit_log before it works (a
// random 50–150 ms sleep) and its end after, both with the server's
// clock_timestamp(), so that every process reads one clock. The recorded
// interval lies within the step, which lies within the attempt's slot, so
// the check never counts more than worked. A step that a kill interrupted
// has a start and no end: it counts as working until the kill, read from
// the server's clock once the killed process was reaped (a little after
// its death, so a little longer than it worked). Counting it until the end
// of the test instead would be wrong, not stricter: a dead process works
// no more, and its tenant's runs rightly work again once its job is
// rescued. How long the dead attempts held their slots (until the worker
// registry rescued their jobs) is logged as well.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

const (
	limitHelperEnv = "TRIBUTARY_LIMIT_HELPER" // "1" in the helper process only; the URL and schema are crashDBURLEnv's and crashSchemaEnv's

	limitKillsRuns    = 2000 // runs the test starts
	limitKillsTenants = 50   // tenants they are spread over
	limitKillsBlock   = 8    // runs started in a row for one tenant, so that several clients race for its slots
	limitKillsLimit   = 3    // DefineOpts.TenantLimit
	limitKillsProcs   = 5    // worker processes up at once
	limitKillsWorkers = 10   // River workers per process
	limitKillsKills   = 2    // processes SIGKILLed, each replaced at once

	// The step works limitStepMin and up to limitStepSpread longer. On two
	// cores the runs go at some 50 a second, bounded by the engine's work
	// per run and hold, not by the steps: 20–50 ms steps left about 2 in
	// flight across every process, too few for the kills to interrupt more
	// than 2 or 3 or for most tenants to reach the limit; 50–150 ms keeps 5
	// or so in flight in the same time.
	limitStepMin    = 50 * time.Millisecond
	limitStepSpread = 100 * time.Millisecond

	// limitKillsDeadline bounds the whole test, from the first helper's
	// start to the last run's completion.
	limitKillsDeadline = 150 * time.Second

	// limitHelperLifetime bounds a helper process that nobody kills, and
	// limitChildDeadline is when the parent kills it at the latest.
	limitHelperLifetime = limitKillsDeadline + 30*time.Second
	limitChildDeadline  = limitHelperLifetime + 30*time.Second

	limitHelperReady = "tenant limit helper: working"
)

// limitIn is a run's input; its output is limitOutput of its tenant and N.
type limitIn struct {
	N int `json:"n"`
}

func limitOutput(tenant string, n int) string { return fmt.Sprintf("%s#%d", tenant, n) }

// limitTenant is the tenant of run n: blocks of limitKillsBlock runs, the
// tenants in turn.
func limitTenant(n int) string { return fmt.Sprintf("t%02d", (n/limitKillsBlock)%limitKillsTenants) }

// limitKillsDef is the limited workflow: one step that records when it
// works in limit_log (limitSetupTable).
func limitKillsDef(pool *pgxpool.Pool) *Definition[limitIn, string] {
	return Define("tenant_kills", func(ctx Context, in limitIn) (string, error) {
		info := ctx.Run()
		return Step(ctx, "work", func(ctx context.Context) (string, error) {
			var id int64
			if err := pool.QueryRow(ctx, `
INSERT INTO limit_log (run_id, tenant, job_id, attempt, pid, started_at)
VALUES ($1, $2, $3, $4, $5, clock_timestamp()) RETURNING id`,
				info.ID, info.Tenant, info.JobID, info.Attempt, os.Getpid()).Scan(&id); err != nil {
				return "", err
			}
			var stopped error
			select {
			case <-time.After(limitStepMin + rand.N(limitStepSpread)):
			case <-ctx.Done():
				stopped = context.Cause(ctx)
			}
			// Even a cancelled step has stopped working now: record it.
			if _, err := pool.Exec(context.WithoutCancel(ctx), "UPDATE limit_log SET ended_at = clock_timestamp() WHERE id = $1", id); err != nil {
				return "", err
			}
			if stopped != nil {
				return "", stopped
			}
			return limitOutput(info.Tenant, in.N), nil
		})
	}, &DefineOpts{TenantLimit: limitKillsLimit})
}

// limitSetupTable creates limit_log: a row per execution of the step, its
// end NULL while it works, or forever when its process was killed.
func limitSetupTable(t *testing.T, db *testdb.DB) {
	t.Helper()
	_, err := db.Pool.Exec(ctxT(t), `
CREATE TABLE limit_log (
	id bigserial PRIMARY KEY,
	run_id uuid NOT NULL,
	tenant text NOT NULL,
	job_id bigint NOT NULL,
	attempt integer NOT NULL,
	pid integer NOT NULL,
	started_at timestamptz NOT NULL,
	ended_at timestamptz
)`)
	require.NoError(t, err)
}

// TestTenantLimitHelperProcess is the worker process of
// TestTenantLimitUnderKills, which starts the test binary again with only
// this test selected and SIGKILLs it.
func TestTenantLimitHelperProcess(t *testing.T) {
	t.Parallel()
	if os.Getenv(limitHelperEnv) != "1" {
		// Not started by TestTenantLimitUnderKills: this is only the helper
		// process's entry point, and there is nothing to test here.
		return
	}
	runLimitHelper(t)
}

// runLimitHelper works the limited workflow's runs in the test's schema
// until the parent kills the process or closes its stdin.
func runLimitHelper(t *testing.T) {
	dbURL, schema := os.Getenv(crashDBURLEnv), os.Getenv(crashSchemaEnv)
	require.NotEmpty(t, dbURL, crashDBURLEnv)
	require.NotEmpty(t, schema, crashSchemaEnv)

	ctx, cancel := context.WithTimeout(context.Background(), limitHelperLifetime)
	defer cancel()

	// An orphan must not outlive the test run: the parent holds our stdin
	// open, so EOF means it is gone.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		fmt.Fprintln(os.Stderr, "tenant limit helper: parent closed stdin; exiting")
		os.Exit(3)
	}()

	pool, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	client, err := NewClient(pool, &Config{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		River: &river.Config{
			Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: limitKillsWorkers}},
			RetryPolicy: fastRetry{},
			TestOnly:    true,
		},
		Schema:    schema,
		Workflows: []Registrable{limitKillsDef(pool)},
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	fmt.Printf("%s: pid %d in schema %s\n", limitHelperReady, os.Getpid(), schema)

	<-ctx.Done()
	t.Fatalf("tenant limit helper: not stopped within %s", limitHelperLifetime)
}

// startLimitHelper starts a helper process working the limited workflow in
// db's schema and waits until its client has started. The process is
// killed and reaped when the test ends, and its output goes to the test
// log if the test failed.
func startLimitHelper(t *testing.T, db *testdb.DB) *crashChild {
	t.Helper()
	c := startChild(t, "tenant limit helper", "TestTenantLimitHelperProcess", limitChildDeadline,
		limitHelperEnv+"=1", crashDBURLEnv+"="+db.URL, crashSchemaEnv+"="+db.Schema)
	c.waitFor(t, fmt.Sprintf("helper pid %d to start its client", c.pid()), func(context.Context) (bool, error) {
		return strings.Contains(c.out.String(), limitHelperReady), nil
	})
	return c
}

// limitKill is a SIGKILL of a helper: its pid, and the server's clock just
// before the signal and once the process was reaped.
type limitKill struct {
	pid           int
	before, after time.Time
}

// limitSpan is a row of limit_log: one execution of the step. end is when
// it stopped working: its recorded end, else the kill of its process.
type limitSpan struct {
	id         int64
	runID      uuid.UUID
	tenant     string
	jobID      int64
	attempt    int
	pid        int
	start, end time.Time
	killed     bool       // interrupted by a kill: no recorded end
	rescuedAt  *time.Time // for a killed span, when its job was rescued
}

func (s *limitSpan) String() string {
	end := s.end.Format("15:04:05.000000")
	if s.killed {
		end = "killed " + end
	}
	return fmt.Sprintf("run %s tenant %s job %d attempt %d pid %d [%s, %s)",
		s.runID, s.tenant, s.jobID, s.attempt, s.pid, s.start.Format("15:04:05.000000"), end)
}

// serverNow reads the server's clock, which limit_log's times come from.
func serverNow(t *testing.T, db *testdb.DB) time.Time {
	t.Helper()
	var now time.Time
	require.NoError(t, db.Pool.QueryRow(ctxT(t), "SELECT clock_timestamp()").Scan(&now))
	return now
}

// TestTenantLimitUnderKills races limitKillsRuns runs over limitKillsTenants
// tenants, under a limit of limitKillsLimit per tenant, across
// limitKillsProcs worker processes of limitKillsWorkers workers each, the
// test process only starting runs. Once a third and two thirds of the runs
// have completed, it SIGKILLs the helper with the most steps working and
// starts a replacement, so that limitKillsProcs stay up. Then, from the
// steps' own records (see the top of the file): at no moment do more than
// limitKillsLimit runs of a tenant work; every run completes once, with
// its output, its step run again only after a kill interrupted it.
func TestTenantLimitUnderKills(t *testing.T) {
	t.Parallel()
	testdb.ManyConnections(t)

	db := testdb.New(t)
	limitSetupTable(t, db)
	def := limitKillsDef(db.Pool)
	client := newCrashClient(t, db, def) // never started: it only starts runs
	ctx, cancel := context.WithTimeout(context.Background(), limitKillsDeadline)
	defer cancel()
	begin := time.Now()

	var helpers []*crashChild
	for range limitKillsProcs {
		helpers = append(helpers, startLimitHelper(t, db))
	}
	t.Logf("%d helpers up in %s", limitKillsProcs, time.Since(begin).Round(time.Millisecond))

	startedAt := time.Now()
	inputs := make(map[uuid.UUID]int, limitKillsRuns)
	const perTx = 50
	for from := 0; from < limitKillsRuns; from += perTx {
		require.NoError(t, pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			for n := from; n < min(from+perTx, limitKillsRuns); n++ {
				h, err := def.StartTx(ctx, client, tx, limitIn{N: n}, &StartOpts{Tenant: limitTenant(n)})
				if err != nil {
					return err
				}
				inputs[h.ID] = n
			}
			return nil
		}))
	}
	t.Logf("%d runs started in %s", limitKillsRuns, time.Since(startedAt).Round(time.Millisecond))

	completed := func(ctx context.Context) (int, error) {
		var n int
		err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs WHERE status = 'completed'").Scan(&n)
		return n, err
	}
	var kills []limitKill
	for k := 1; k <= limitKillsKills; k++ {
		require.NoError(t, poll(ctx, nil, func(ctx context.Context) (bool, error) {
			n, err := completed(ctx)
			return n >= k*limitKillsRuns/(limitKillsKills+1), err
		}), "waiting for kill %d", k)
		victim, kill := killBusiestHelper(t, ctx, db, helpers)
		kills = append(kills, kill)
		helpers = slices.DeleteFunc(helpers, func(h *crashChild) bool { return h == victim })
		helpers = append(helpers, startLimitHelper(t, db))
		t.Logf("kill %d: pid %d at %s, replaced", k, kill.pid, time.Since(begin).Round(time.Millisecond))
	}

	err := poll(ctx, nil, func(ctx context.Context) (bool, error) {
		n, err := completed(ctx)
		return n == limitKillsRuns, err
	})
	if err != nil {
		var statuses []byte
		_ = db.Pool.QueryRow(context.Background(),
			"SELECT jsonb_object_agg(status, n)::text FROM (SELECT status, count(*) n FROM workflow_runs GROUP BY status) s").Scan(&statuses)
		t.Fatalf("not every run completed within %s (%v): %s", limitKillsDeadline, err, statuses)
	}
	took := time.Since(begin)
	for _, h := range helpers {
		select {
		case <-h.exited:
			t.Fatalf("helper pid %d exited by itself: %s", h.pid(), h.cmd.ProcessState)
		default:
		}
	}

	// Every run completed once, with its output.
	rows, err := db.Pool.Query(ctxT(t), "SELECT id, status, coalesce(tenant, ''), output FROM workflow_runs")
	require.NoError(t, err)
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		ID     uuid.UUID
		Status string
		Tenant string
		Output []byte
	}])
	require.NoError(t, err)
	require.Len(t, runs, limitKillsRuns)
	for _, r := range runs {
		n, ok := inputs[r.ID]
		require.True(t, ok, "run %s was not started by the test", r.ID)
		require.Equal(t, string(StatusCompleted), r.Status, "run %s", r.ID)
		require.Equal(t, limitTenant(n), r.Tenant, "run %s", r.ID)
		require.NotNil(t, r.Output, "run %s", r.ID)
		require.JSONEq(t, fmt.Sprintf("%q", limitOutput(limitTenant(n), n)), string(r.Output), "run %s", r.ID)
	}

	spans := limitLoadSpans(t, db, kills)
	checkLimitSpans(t, spans, inputs, kills)
	t.Logf("%d runs of %d tenants, limit %d, %d processes of %d workers, %d killed: all completed in %s",
		limitKillsRuns, limitKillsTenants, limitKillsLimit, limitKillsProcs, limitKillsWorkers, len(kills), took.Round(time.Millisecond))
	var jobs int
	require.NoError(t, db.Pool.QueryRow(ctxT(t), "SELECT count(*) FROM river_job").Scan(&jobs))
	t.Logf("%d River jobs for %d runs", jobs, limitKillsRuns)
}

// killBusiestHelper SIGKILLs the helper with the most steps working, once
// one has a step working, and returns it and the kill.
func killBusiestHelper(t *testing.T, ctx context.Context, db *testdb.DB, helpers []*crashChild) (*crashChild, limitKill) {
	t.Helper()
	var victim *crashChild
	require.NoError(t, poll(ctx, nil, func(ctx context.Context) (bool, error) {
		rows, err := db.Pool.Query(ctx, "SELECT pid, count(*) FROM limit_log WHERE ended_at IS NULL GROUP BY pid")
		if err != nil {
			return false, err
		}
		working, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
			PID int
			N   int
		}])
		if err != nil {
			return false, err
		}
		most := 0
		for _, h := range helpers {
			for _, w := range working {
				if w.PID == h.pid() && w.N > most {
					victim, most = h, w.N
				}
			}
		}
		return victim != nil, nil
	}), "waiting for a helper to work a step")
	kill := limitKill{pid: victim.pid(), before: serverNow(t, db)}
	victim.kill(t)
	kill.after = serverNow(t, db)
	return victim, kill
}

// limitLoadSpans reads limit_log, ending each span of a killed process
// without a recorded end at the kill, with when its job was rescued.
func limitLoadSpans(t *testing.T, db *testdb.DB, kills []limitKill) []*limitSpan {
	t.Helper()
	rows, err := db.Pool.Query(ctxT(t), `
SELECT l.id, l.run_id, l.tenant, l.job_id, l.attempt, l.pid, l.started_at, l.ended_at,
	(SELECT min((e->>'at')::timestamptz) FROM river_job j, unnest(j.errors) e
		WHERE j.id = l.job_id AND (e->>'at')::timestamptz >= l.started_at)
FROM limit_log l ORDER BY l.started_at, l.id`)
	require.NoError(t, err)
	defer rows.Close()
	killedAt := map[int]limitKill{}
	for _, k := range kills {
		killedAt[k.pid] = k
	}
	var spans []*limitSpan
	for rows.Next() {
		var (
			s            limitSpan
			end, rescued *time.Time
		)
		require.NoError(t, rows.Scan(&s.id, &s.runID, &s.tenant, &s.jobID, &s.attempt, &s.pid, &s.start, &end, &rescued))
		kill, wasKilled := killedAt[s.pid]
		switch {
		case end != nil:
			s.end = *end
			if wasKilled && s.end.After(kill.after) {
				// The server ran the step's UPDATE, sent before the kill,
				// after it (as for a start, below): the step worked until
				// the kill at the latest, and counts as working until then.
				t.Logf("%s: its end was recorded after its process was killed at %s; it counts as working until the kill", &s, kill.after)
				s.end = kill.after
				if s.start.After(s.end) {
					s.start = s.end // both recorded late: it never worked
				}
			}
		case wasKilled:
			s.end, s.killed, s.rescuedAt = kill.after, true, rescued
			if s.start.After(kill.after) {
				// The server ran the step's INSERT, sent before the kill,
				// after it (a busy server reads a dead client's last
				// messages late): the step never worked.
				t.Logf("%s: its start was recorded after its process was killed; it counts as never working", &s)
				s.start = kill.after
			}
		default:
			t.Fatalf("%s never ended, and its process was not killed", &s)
		}
		spans = append(spans, &s)
	}
	require.NoError(t, rows.Err())
	return spans
}

// checkLimitSpans checks the spans: no more than limitKillsLimit of a
// tenant at once, and each run's step ran to its end once, after as many
// executions as kills interrupted. It logs the figures: the most spans of
// each tenant at once, the steps the kills interrupted, and how soon the
// dead processes' slots came back.
func checkLimitSpans(t *testing.T, spans []*limitSpan, inputs map[uuid.UUID]int, kills []limitKill) {
	t.Helper()
	byTenant := map[string][]*limitSpan{}
	byRun := map[uuid.UUID][]*limitSpan{}
	for _, s := range spans {
		byTenant[s.tenant] = append(byTenant[s.tenant], s)
		byRun[s.runID] = append(byRun[s.runID], s)
	}

	// At most the limit at every moment.
	most := map[string]int{}
	mostTillRescue := 0
	for tenant, ts := range byTenant {
		n, over := limitSweep(ts, func(s *limitSpan) time.Time { return s.end })
		most[tenant] = n
		for _, at := range over {
			var working []string
			for _, s := range ts {
				if !s.start.After(at) && s.end.After(at) {
					working = append(working, s.String())
				}
			}
			t.Errorf("tenant %s: %d steps work at %s, over the limit of %d:\n\t%s",
				tenant, len(working), at.Format("15:04:05.000000"), limitKillsLimit, strings.Join(working, "\n\t"))
		}
		// Not checked, only logged: the dead attempts' slots held until
		// their jobs were rescued, as the slots table counts them.
		n, _ = limitSweep(ts, func(s *limitSpan) time.Time {
			if s.killed && s.rescuedAt != nil {
				return *s.rescuedAt
			}
			return s.end
		})
		mostTillRescue = max(mostTillRescue, n)
	}
	require.Len(t, most, limitKillsTenants, "every tenant's runs worked")
	tenants := slices.Sorted(maps.Keys(most))
	var mosts []string
	reached := 0
	for _, tenant := range tenants {
		mosts = append(mosts, fmt.Sprintf("%s:%d", tenant, most[tenant]))
		if most[tenant] == limitKillsLimit {
			reached++
		}
	}
	t.Logf("most steps of a tenant working at once: %s", strings.Join(mosts, " "))
	t.Logf("%d of %d tenants reached the limit of %d; counting the killed steps until their jobs were rescued, at most %d",
		reached, limitKillsTenants, limitKillsLimit, mostTillRescue)
	require.Positive(t, reached, "the limit is reached: the test races for it")

	// Each run's step ran to its end once; earlier executions were killed
	// or, ended by a process killed before it stored the step, replayed.
	killedPIDs := map[int]bool{}
	for _, k := range kills {
		killedPIDs[k.pid] = true
	}
	replayed, interruptedAll := 0, 0
	for id := range inputs {
		rs := byRun[id]
		require.NotEmpty(t, rs, "run %s never worked", id)
		last := rs[len(rs)-1]
		require.False(t, last.killed, "run %s completed, but its last step was killed: %s", id, last)
		for _, s := range rs[:len(rs)-1] {
			require.True(t, killedPIDs[s.pid], "run %s worked again after %s, whose process lived", id, s)
		}
		if len(rs) > 1 {
			replayed++
		}
	}
	require.Len(t, byRun, limitKillsRuns, "only the test's runs worked")

	// The kills: what they interrupted, and when the slots came back.
	for i, k := range kills {
		var interrupted []*limitSpan
		for _, s := range spans {
			if s.pid == k.pid && s.killed {
				interrupted = append(interrupted, s)
			}
		}
		var rescue, restart time.Duration
		perTenant := map[string]int{}
		for _, s := range interrupted {
			perTenant[s.tenant]++
			if s.rescuedAt != nil {
				rescue = max(rescue, s.rescuedAt.Sub(k.after))
			}
			if rs := byRun[s.runID]; rs[len(rs)-1] != s {
				next := rs[slices.Index(rs, s)+1]
				restart = max(restart, next.start.Sub(k.after))
			}
		}
		// Per tenant of the dead steps: the steps of its runs started after
		// the kill, the first of them, and when it first used a dead slot
		// (more of its steps working than the slots the dead process did
		// not hold), if it ever had the runs to.
		var back []string
		for tenant, dead := range perTenant {
			after, first := 0, time.Time{}
			for _, s := range byTenant[tenant] {
				if s.start.After(k.after) {
					after++
					if first.IsZero() {
						first = s.start
					}
				}
			}
			line := fmt.Sprintf("%s (%d dead): %d steps after", tenant, dead, after)
			if after > 0 {
				line += fmt.Sprintf(", the first %s after the kill", first.Sub(k.after).Round(time.Millisecond))
			}
			if at := limitFirstOver(byTenant[tenant], k.after, limitKillsLimit-dead); !at.IsZero() {
				line += fmt.Sprintf(", a dead slot used %s after", at.Sub(k.after).Round(time.Millisecond))
			} else {
				line += fmt.Sprintf(", never more than %d working again", limitKillsLimit-dead)
			}
			back = append(back, line)
		}
		slices.Sort(back)
		// For comparison: the other tenants that reached the limit after
		// the kill (most do not: the run rate, not the limit, bounds them).
		others, othersFull := 0, 0
		for tenant, ts := range byTenant {
			if perTenant[tenant] == 0 {
				others++
				if !limitFirstOver(ts, k.after, limitKillsLimit-1).IsZero() {
					othersFull++
				}
			}
		}
		t.Logf("kill %d (pid %d, %s after the signal was sent): %d steps interrupted; jobs rescued at most %s after, "+
			"their runs' steps started again at most %s after; its tenants: %s; %d of the %d other tenants reached the limit again",
			i+1, k.pid, k.after.Sub(k.before).Round(time.Millisecond), len(interrupted),
			rescue.Round(time.Millisecond), restart.Round(time.Millisecond), strings.Join(back, "; "), othersFull, others)
		interruptedAll += len(interrupted)
	}
	// A kill lands between steps now and then on a loaded machine (the
	// victim is picked while it works, and killed a moment later): one of
	// the two must have cut steps short, or the test did not test a crash.
	require.Positive(t, interruptedAll, "neither kill interrupted a step")
	t.Logf("%d runs worked their step again after a kill", replayed)
}

// limitSweep returns the most spans working at once, their ends given by
// end, and the moments that count went over limitKillsLimit. A span works
// in [start, end): one ending when another starts does not overlap it.
func limitSweep(spans []*limitSpan, end func(*limitSpan) time.Time) (int, []time.Time) {
	type event struct {
		at    time.Time
		delta int
	}
	events := make([]event, 0, 2*len(spans))
	for _, s := range spans {
		events = append(events, event{s.start, +1}, event{end(s), -1})
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta)) })
	var (
		now, most int
		over      []time.Time
	)
	for _, e := range events {
		now += e.delta
		if e.delta > 0 && now > limitKillsLimit {
			over = append(over, e.at)
		}
		most = max(most, now)
	}
	return most, over
}

// limitFirstOver returns the first start after from at which more than n
// of spans work, or the zero time if none does.
func limitFirstOver(spans []*limitSpan, from time.Time, n int) time.Time {
	for _, s := range spans {
		if !s.start.After(from) {
			continue
		}
		working := 0
		for _, o := range spans {
			if !o.start.After(s.start) && o.end.After(s.start) {
				working++
			}
		}
		if working > n {
			return s.start
		}
	}
	return time.Time{}
}
