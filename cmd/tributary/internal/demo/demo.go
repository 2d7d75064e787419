// Package demo is what `tributary demo` runs: example workflows and
// schedules on a real database, a scripted start that leaves something to
// look at in the UI, and a live log of what happens next.
//
//	d, err := demo.New(pool, &demo.Config{Logger: logger})
//	if err := d.Start(ctx); err != nil { … }
//	defer d.Stop(context.WithoutCancel(ctx))
//	scripted, err := d.Script(ctx, os.Stdout) // runs, schedules
//	// serve riverui.New(d.Workflows, d.Schedules, …) here
//	err = d.Follow(ctx, os.Stdout, nil) // one line per fire and finished run
//
// The script is idempotent on a database it ran on before: it finds its
// schedules by owner and name, its onboarding runs by idempotency key, and
// the sleeping and waiting runs while they still sleep and wait.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/metric"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/tributaryotel"
	"github.com/tributary-go/tributary/workflow"
)

// FollowInterval is how often Follow looks for new and finished runs.
const FollowInterval = 250 * time.Millisecond

// Config configures a Demo. A nil *Config is the same as a zero Config.
type Config struct {
	// Logger receives the clients' logs.
	//
	// Defaults to a logger that discards everything.
	Logger *slog.Logger

	// MeterProvider, when set, receives the demo's metrics: the clients
	// run the OpenTelemetry middleware of package tributaryotel on it (runs
	// started and finished, steps, timers) and the schedule client reports
	// its slots to it.
	MeterProvider metric.MeterProvider

	// Schema is the Postgres schema of River's and Tributary's tables. The
	// demo's own table, demo_accounts, is created on the pool's
	// search_path.
	//
	// Defaults to "", the search_path.
	Schema string
}

// Demo is a working workflow client with the demo's workflows and a
// schedule client, which the UI can serve.
type Demo struct {
	// Schedules is the schedule client, bound to Workflows.
	Schedules *schedule.Client
	// Workflows is the workflow client: it works the demo's workflows and
	// fires the schedules' slots.
	Workflows *workflow.Client

	heartbeat uuid.UUID       // the demo-heartbeat schedule, once Script made it
	grant     *schedule.Grant // the daily report's grant, once Script made or found it
	pool      *pgxpool.Pool

	mu    sync.Mutex
	names map[uuid.UUID]string          // schedule names by id, for the live log
	seen  map[uuid.UUID]workflow.Status // runs already reported, by id
}

// New builds the demo's clients on pool. It does not touch the database.
func New(pool *pgxpool.Pool, config *Config) (*Demo, error) {
	if config == nil {
		config = &Config{}
	}
	logger := config.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var middleware []workflow.Middleware
	if config.MeterProvider != nil {
		middleware = append(middleware, tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{MeterProvider: config.MeterProvider}))
	}
	wf, err := workflow.NewClient(pool, &workflow.Config{
		Logger:     logger,
		Middleware: middleware,
		River:      &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}}},
		Schema:     config.Schema,
		Workflows:  Workflows(),
	})
	if err != nil {
		return nil, err
	}
	sc, err := schedule.New(wf, &schedule.Config{Logger: logger, MeterProvider: config.MeterProvider})
	if err != nil {
		return nil, err
	}
	return &Demo{
		Schedules: sc,
		Workflows: wf,
		names:     map[uuid.UUID]string{},
		pool:      pool,
		seen:      map[uuid.UUID]workflow.Status{},
	}, nil
}

// Start creates the demo's table, notes the runs the database has already
// (Follow reports only what happens from now on) and starts working runs
// and firing slots.
func (d *Demo) Start(ctx context.Context) error {
	if _, err := d.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS demo_accounts (id bigserial PRIMARY KEY, email text NOT NULL)`); err != nil {
		return fmt.Errorf("creating the demo_accounts table: %w", err)
	}
	runs, err := d.Workflows.ListRuns(ctx, &workflow.ListParams{Limit: 1000})
	if err != nil {
		return err
	}
	for _, run := range runs {
		d.markSeen(run.ID, run.Status)
	}
	// River stops at once, cancelling the jobs in progress, when the
	// context it started with ends; Stop is the graceful way.
	return d.Workflows.Start(context.WithoutCancel(ctx))
}

// Stop stops working runs, waiting for attempts in progress until ctx ends.
func (d *Demo) Stop(ctx context.Context) error { return d.Workflows.Stop(ctx) }

// Scripted is what Script set up.
type Scripted struct {
	// Heartbeat is the schedule that fires every 10 seconds.
	Heartbeat *schedule.Schedule
	// Schedules are all of the demo's schedules, Heartbeat first.
	Schedules []*schedule.Schedule
	// Sleeping is a Reminder run, asleep for ReminderDelay.
	Sleeping *workflow.Run
	// Waiting is an Approval run waiting for its "decision" signal.
	Waiting *workflow.Run
	// Fork is Ada's onboarding run forked from its render_welcome step.
	Fork *workflow.Run
	// BulkRetry is what the bulk retry of the failed charges did.
	BulkRetry *workflow.BulkResult
	// Grant is the execution grant the daily report runs under.
	Grant *schedule.Grant
	// Exports are three Export runs of tenant ExportTenant: one works
	// and the others are held back by its limit (or all are held, behind
	// the exports of an earlier demo still working).
	Exports []*workflow.Run
}

// Script starts the demo's runs and creates its schedules, printing what it
// does on out: three onboarding runs, followed to completion; a reminder,
// followed until it sleeps; an approval, followed until it waits for its
// signal; three schedules, one of them every 10 seconds and one paused;
// and three exports of one tenant, followed until one works and the
// others are held back by its limit.
func (d *Demo) Script(ctx context.Context, out io.Writer) (*Scripted, error) {
	fmt.Fprintln(out, "\n1. Three onboarding runs: three memoized steps each, the first in a transaction with its memo")
	var onboards []*workflow.Handle[string]
	for _, name := range []string{"Ada", "Grace", "Edsger"} {
		h, err := Onboard.Start(ctx, d.Workflows, Signup{Email: strings.ToLower(name) + "@example.com", Name: name},
			&workflow.StartOpts{IdempotencyKey: "signup-" + strings.ToLower(name)})
		if err != nil {
			return nil, err
		}
		onboards = append(onboards, h)
	}
	for _, h := range onboards {
		msg, err := h.Result(ctx)
		if err != nil {
			return nil, err
		}
		d.markSeen(h.ID, workflow.StatusCompleted)
		fmt.Fprintf(out, "   run %s: %s\n", h.ID, msg)
	}
	if err := printSteps(ctx, d.Workflows, out, onboards[0].ID); err != nil {
		return nil, err
	}

	scripted := &Scripted{}
	fmt.Fprintf(out, "\n2. A reminder that sleeps %.0f minutes, holding no worker while it sleeps\n", ReminderDelay.Minutes())
	sleeping, err := d.reuseRun(ctx, Reminder.Name(), workflow.StatusSleeping, func() (uuid.UUID, error) {
		h, err := Reminder.Start(ctx, d.Workflows, Note{Text: "look at the dashboard", To: "you"}, nil)
		if err != nil {
			return uuid.Nil, err
		}
		return h.ID, nil
	})
	if err != nil {
		return nil, err
	}
	if scripted.Sleeping, err = d.waitFor(ctx, out, sleeping, workflow.StatusSleeping); err != nil {
		return nil, err
	}
	if err := printSteps(ctx, d.Workflows, out, sleeping); err != nil {
		return nil, err
	}

	fmt.Fprintln(out, "\n3. An expense approval: a durable 2 s sleep, then a wait for the \"decision\" signal")
	waiting, err := d.reuseRun(ctx, Approval.Name(), workflow.StatusWaiting, func() (uuid.UUID, error) {
		h, err := Approval.Start(ctx, d.Workflows, Expense{Amount: 1200, Item: "laptop"}, &workflow.StartOpts{Tags: []string{"needs-approval"}})
		if err != nil {
			return uuid.Nil, err
		}
		return h.ID, nil
	})
	if err != nil {
		return nil, err
	}
	if scripted.Waiting, err = d.waitFor(ctx, out, waiting, workflow.StatusWaiting); err != nil {
		return nil, err
	}

	fmt.Fprintln(out, "\n4. A charge that fails for good: a NonRetryable error fails the run at once, with its step and error")
	charge, err := Charge.Start(ctx, d.Workflows, Expense{Amount: 90, Item: "coffee machine"}, nil)
	if err != nil {
		return nil, err
	}
	var runErr *workflow.RunError
	switch _, err := charge.Result(ctx); {
	case err == nil:
		return nil, errors.New("the charge run completed; it should have failed")
	case !errors.As(err, &runErr):
		return nil, err
	}
	d.markSeen(charge.ID, workflow.StatusFailed)
	fmt.Fprintf(out, "   run %s failed in step %s: %s\n", charge.ID, runErr.Step, runErr.Message)

	fmt.Fprintf(out, "\n5. A fork: %s's onboarding again from its render_welcome step (after a fix to the message, say): create_account's memo is copied, so no second account\n", "Ada")
	// A demo run again on the same database shows the fork it made before.
	forks, err := d.Workflows.ListRuns(ctx, &workflow.ListParams{ForkedFrom: &onboards[0].ID, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(forks) > 0 {
		scripted.Fork = forks[0]
	} else if scripted.Fork, err = d.Workflows.Fork(ctx, onboards[0].ID, "render_welcome"); err != nil {
		return nil, err
	}
	if _, err := d.waitFor(ctx, out, scripted.Fork.ID, workflow.StatusCompleted); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "   (tributary workflow fork %s --from-step render_welcome; its page links the two)\n", onboards[0].ID)

	fmt.Fprintln(out, "\n6. A bulk retry of every failed demo_charge run, in batches (tributary workflow bulk retry --type demo_charge --status failed)")
	if scripted.BulkRetry, err = d.Workflows.RetryRuns(ctx, &workflow.BulkParams{
		Filter: workflow.ListParams{Type: Charge.Name(), Status: workflow.StatusFailed},
	}); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "   retried %d of %d matching runs in %d batch(es); the card is still declined, so they fail again:\n",
		len(scripted.BulkRetry.Changed), scripted.BulkRetry.Matched, scripted.BulkRetry.Batches)
	for _, id := range scripted.BulkRetry.Changed {
		if _, err := d.waitFor(ctx, out, id, workflow.StatusFailed); err != nil {
			return nil, err
		}
	}

	fmt.Fprintln(out, "\n7. Three schedules, declared in code: a heartbeat every 10 seconds, a daily report in Tokyo under an execution grant, a paused weekly digest")
	if scripted.Schedules, err = d.declareSchedules(ctx, out); err != nil {
		return nil, err
	}
	scripted.Heartbeat, scripted.Grant = scripted.Schedules[0], d.grant
	fmt.Fprintf(out, "   the daily report runs under grant %s: subject %s, scopes %s, expires %s; revoke it and its next slot is skipped (tributary grant revoke %s)\n",
		d.grant.ID, d.grant.Subject, strings.Join(d.grant.Scopes, " "), d.grant.ExpiresAt.UTC().Format(time.DateOnly), d.grant.ID)
	d.mu.Lock()
	d.heartbeat = scripted.Heartbeat.ID
	d.mu.Unlock()
	printSchedules(out, scripted.Schedules)

	fmt.Fprintf(out, "\n8. Three exports for tenant %s, whose workflow type lets 1 run of a tenant work at once (TenantLimit: 1): the others are held until it ends\n", ExportTenant)
	if scripted.Exports, err = d.startExports(ctx, out); err != nil {
		return nil, err
	}
	return scripted, nil
}

// startExports starts three Export runs of tenant ExportTenant and waits
// until each works, is held back or has ended, printing each then.
func (d *Demo) startExports(ctx context.Context, out io.Writer) ([]*workflow.Run, error) {
	var ids []uuid.UUID
	for _, table := range []string{"invoices", "customers", "payments"} {
		h, err := Export.Start(ctx, d.Workflows, ExportJob{Table: table}, &workflow.StartOpts{Tenant: ExportTenant})
		if err != nil {
			return nil, err
		}
		ids = append(ids, h.ID)
	}
	ticker := time.NewTicker(FollowInterval / 5)
	defer ticker.Stop()
	for {
		runs, tenant, err := d.exports(ctx, ids)
		if err != nil {
			return nil, err
		}
		// The runs settled when every run works (Tenant.Running counts
		// its running jobs), is held (pending while its tenant has as
		// many running as its limit) or ended; a tenant not listed has
		// none running or ready.
		accounted := 0
		if tenant != nil {
			accounted = tenant.Running
		}
		for _, run := range runs {
			if run.Status.Finished() || (run.Status == workflow.StatusPending && run.Held != "") {
				accounted++
			}
		}
		settled := accounted == len(runs)
		if settled {
			printExports(out, runs, tenant)
			for _, run := range runs {
				d.markSeen(run.ID, run.Status)
			}
			return runs, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ticker.C:
		}
	}
}

// exports reads the Export runs ids and how their tenant stands (nil when
// Tenants does not list it).
func (d *Demo) exports(ctx context.Context, ids []uuid.UUID) ([]*workflow.Run, *workflow.Tenant, error) {
	runs := make([]*workflow.Run, len(ids))
	for i, id := range ids {
		run, err := d.Workflows.GetRun(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		runs[i] = run
	}
	tenants, err := d.Workflows.Tenants(ctx, &workflow.TenantParams{Type: Export.Name(), Tenant: ExportTenant})
	if err != nil || len(tenants) == 0 {
		return runs, nil, err
	}
	return runs, tenants[0], nil
}

// printExports prints each Export run's status, and why a held one waits.
func printExports(out io.Writer, runs []*workflow.Run, tenant *workflow.Tenant) {
	for _, run := range runs {
		text := string(run.Status)
		if run.Held != "" && run.Status == workflow.StatusPending {
			text = "pending, held"
			if tenant != nil {
				text += ": " + tenant.Why()
			}
		}
		fmt.Fprintf(out, "   run %s: %s\n", run.ID, text)
	}
}

// schedules are the demo's schedules, the heartbeat first, each with a key
// (its name): the demo declares them at every start.
func schedules() []*schedule.Params {
	return []*schedule.Params{
		{
			Key: "demo-heartbeat", Name: "demo-heartbeat", Owner: "platform-team", Description: "checks the database every 10 seconds",
			Workflow: Heartbeat.Name(), Input: Probe{Service: "accounts-db"}, Cron: "*/10 * * * * *",
		},
		{
			Key: "demo-daily-report", Name: "demo-daily-report", Owner: "finance-tokyo", Description: "the day's report, at 09:00 in Tokyo",
			Workflow: Report.Name(), Input: Period{Period: "daily"}, Cron: "0 9 * * *", TimeZone: "Asia/Tokyo",
		},
		{
			Key: "demo-weekly-digest", Name: "demo-weekly-digest", Owner: "finance-new-york", Description: "the week's digest, Mondays at 08:30 in New York",
			Workflow: Report.Name(), Input: Period{Period: "weekly"}, Cron: "30 8 * * 1", TimeZone: "America/New_York",
			Paused: true, PauseNote: "paused by the demo: resume it from the dashboard or the CLI",
		},
	}
}

// declareSchedules declares the demo's schedules as service "demo" (a
// demo run again on the same database changes nothing) and returns them,
// the heartbeat first. A heartbeat paused since an earlier demo is
// resumed: a declaration leaves an operator's pause alone.
func (d *Demo) declareSchedules(ctx context.Context, out io.Writer) ([]*schedule.Schedule, error) {
	grant, err := d.reportGrant(ctx)
	if err != nil {
		return nil, err
	}
	d.grant = grant
	params := schedules()
	params[1].GrantID = &grant.ID
	res, err := d.Schedules.Declare(ctx, &schedule.Declaration{Service: "demo", Schedules: params})
	if err != nil {
		return nil, fmt.Errorf("declaring the demo's schedules: %w", err)
	}
	fmt.Fprintf(out, "   declared as service demo: %s\n", res)
	if res.Superseded {
		return nil, fmt.Errorf("declaring the demo's schedules: %s", res)
	}
	var declared []*schedule.Schedule
	for i, decision := range res.Decisions[:len(schedules())] {
		s := decision.Schedule
		if i == 0 && s.Paused {
			fmt.Fprintf(out, "   %s was paused; resuming it\n", s.Name)
			if s, err = d.Schedules.Resume(ctx, schedule.ByID(s.ID), nil); err != nil {
				return nil, err
			}
		}
		d.mu.Lock()
		d.names[s.ID] = s.Name
		d.mu.Unlock()
		declared = append(declared, s)
	}
	return declared, nil
}

// reportGrant returns the execution grant the daily report runs under:
// the newest active one of its owner that lasts a week more (left by an
// earlier demo on this database), else a new one for 30 days.
func (d *Demo) reportGrant(ctx context.Context) (*schedule.Grant, error) {
	const subject = "finance-tokyo"
	grants, err := d.Schedules.ListGrants(ctx, &schedule.ListGrantsParams{Subject: subject, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(grants) > 0 && grants[0].ExpiresAt != nil && grants[0].ExpiresAt.After(time.Now().AddDate(0, 0, 7)) {
		return grants[0], nil
	}
	return d.Schedules.CreateGrant(ctx, &schedule.GrantParams{
		Subject: subject, Scopes: []string{schedule.ScopeExecute(Report.Name())}, ExpiresAt: time.Now().AddDate(0, 0, 30),
	})
}

// reuseRun returns the newest run of typ when it is in status (left by an
// earlier demo on this database), else the run start starts.
func (d *Demo) reuseRun(ctx context.Context, typ string, status workflow.Status, start func() (uuid.UUID, error)) (uuid.UUID, error) {
	runs, err := d.Workflows.ListRuns(ctx, &workflow.ListParams{Type: typ, Limit: 1})
	if err != nil {
		return uuid.Nil, err
	}
	if len(runs) == 1 && runs[0].Status == status {
		return runs[0].ID, nil
	}
	return start()
}

// waitFor prints the run's status as it changes until it reaches want, and
// returns the run then.
func (d *Demo) waitFor(ctx context.Context, out io.Writer, id uuid.UUID, want workflow.Status) (*workflow.Run, error) {
	ticker := time.NewTicker(FollowInterval / 5)
	defer ticker.Stop()
	last := workflow.Status("")
	for {
		run, err := d.Workflows.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		if run.Status != last {
			fmt.Fprintf(out, "   run %s: %s\n", run.ID, statusText(run))
			last = run.Status
		}
		if run.Status == want {
			d.markSeen(run.ID, run.Status)
			return run, nil
		}
		if run.Status.Finished() {
			return nil, fmt.Errorf("run %s ended %s before reaching %s", run.ID, run.Status, want)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ticker.C:
		}
	}
}

// statusText is a run's status, with when a sleeping run wakes.
func statusText(run *workflow.Run) string {
	for _, s := range run.Steps {
		if run.Status == workflow.StatusSleeping && s.WakeAt != nil && s.FinishedAt == nil {
			return fmt.Sprintf("%s until %s", run.Status, s.WakeAt.Local().Format(time.TimeOnly))
		}
	}
	return string(run.Status)
}

func printSteps(ctx context.Context, client *workflow.Client, out io.Writer, id uuid.UUID) error {
	run, err := client.GetRun(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   steps of %s (attempts: %d):\n", run.ID, run.Attempt)
	for _, s := range run.Steps {
		extra := ""
		if s.WakeAt != nil {
			extra = " wakes " + s.WakeAt.Local().Format(time.TimeOnly)
		}
		fmt.Fprintf(out, "     %-16s %-7s %-10s %8s%s\n", s.Name, s.Kind, s.Status, s.Duration().Round(time.Millisecond), extra)
	}
	return nil
}

func printSchedules(out io.Writer, schedules []*schedule.Schedule) {
	for _, s := range schedules {
		loc, err := schedule.LoadZone(s.TimeZone)
		if err != nil {
			loc = time.UTC
		}
		state := "no next slot"
		if s.Paused {
			state = "paused"
		} else if s.NextFireAt != nil {
			state = "next " + s.NextFireAt.In(loc).Format(time.DateTime+" MST")
		}
		fmt.Fprintf(out, "   %-19s %-15s %-17s %-30s owner %s\n", s.Name, s.Cron, loc, state, s.Owner)
	}
}

func (d *Demo) markSeen(id uuid.UUID, status workflow.Status) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen[id] = status
}
