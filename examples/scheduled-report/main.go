// Command scheduled-report is the start-up of a reporting service that
// declares its schedule in code (schedule.Client.Declare), under an
// execution grant: the schedule's runs act with the grant's authority, not
// a user's session, and stop the moment the grant is revoked.
//
//	go run ./examples/scheduled-report
//
// The service "reports" declares one schedule, the finance team's revenue
// report at 06:00 London time (Owner "finance", Key "revenue-report"),
// under a grant for the subject "reporting-bot" scoped to the report
// workflow type only. The grant's id is the service's configuration, kept
// here in the table report_settings; the first start issues the grant.
// Declare creates the schedule on the first start and finds it unchanged on
// every later one, and the example prints what it did.
//
// Rather than wait for 06:00, it triggers the report now. The report reads
// who it runs for and which schedule started it from workflow.RunInfo, and
// records a row in the reports table. The example then shows that the
// grant does not stretch to another workflow type (creating a purge_orders
// schedule under it is refused with a validation error), and rotates the
// grant: it revokes it and triggers the report again, which is skipped,
// "grant revoked", as every slot under a revoked grant is. A revocation is
// final: the next grant is a new one, and the service declares its schedule
// under it, which Declare does by updating the schedule in place.
//
// It uses DATABASE_URL, or starts a throw-away Postgres when that is unset.
// In a database that stays, so does the schedule, as in a real service:
// running the example again declares the same and changes nothing
// (`tributary schedule get revenue-report --owner finance` shows it).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/devdb"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// Report is a row of the reports table, and the report workflow's output.
type Report struct {
	ID         int64     `json:"id"`
	Subject    string    `json:"subject"`
	ScheduleID uuid.UUID `json:"schedule_id"`
	FireAt     time.Time `json:"fire_at"`
	Orders     int       `json:"orders"`
	Revenue    int64     `json:"revenue"`
}

// ReportWorkflow totals the orders and records the report, in one
// transaction with the step's memo. RunInfo says for whom (the grant's
// subject), from which schedule and for which slot it runs (a triggered
// run's slot is the moment of the trigger).
var ReportWorkflow = workflow.Define("report", func(ctx workflow.Context, _ struct{}) (Report, error) {
	info := ctx.Run()
	if info.ScheduleID == nil || info.GrantSubject == "" {
		return Report{}, workflow.NonRetryable(fmt.Errorf("run %s: a report runs only from a schedule under a grant", info.ID))
	}
	return workflow.StepTx(ctx, "record", func(ctx context.Context, tx pgx.Tx) (Report, error) {
		r := Report{Subject: info.GrantSubject, ScheduleID: *info.ScheduleID, FireAt: *info.FireAt}
		err := tx.QueryRow(ctx, `
			INSERT INTO reports (run_id, schedule_id, fire_at, subject, orders, revenue)
			SELECT $1, $2, $3, $4, count(*), coalesce(sum(amount), 0) FROM report_orders
			RETURNING id, orders, revenue`,
			info.ID, r.ScheduleID, r.FireAt, r.Subject).Scan(&r.ID, &r.Orders, &r.Revenue)
		return r, err
	})
}, nil)

// PurgeOrders is a workflow the report's grant must not allow.
var PurgeOrders = workflow.Define("purge_orders", func(ctx workflow.Context, _ struct{}) (int64, error) {
	return workflow.StepTx(ctx, "purge", func(ctx context.Context, tx pgx.Tx) (int64, error) {
		tag, err := tx.Exec(ctx, `DELETE FROM report_orders`)
		return tag.RowsAffected(), err
	})
}, nil)

const setupSQL = `
CREATE TABLE IF NOT EXISTS report_orders (id bigint PRIMARY KEY, amount bigint NOT NULL);
CREATE TABLE IF NOT EXISTS reports (id bigserial PRIMARY KEY, run_id uuid NOT NULL UNIQUE, schedule_id uuid NOT NULL,
	fire_at timestamptz NOT NULL, subject text NOT NULL, orders int NOT NULL, revenue bigint NOT NULL);
CREATE TABLE IF NOT EXISTS report_settings (service text PRIMARY KEY, grant_id uuid NOT NULL);
INSERT INTO report_orders (id, amount) VALUES (1, 1200), (2, 300), (3, 4500) ON CONFLICT (id) DO NOTHING`

// release is what one build of the service declares: a build that
// changes its schedules gives them a larger Version, so that an older
// build, still running during a rolling deploy, never undoes them.
type release struct {
	Version int64
	Cron    string
}

// thisRelease is this build's.
var thisRelease = release{Version: 1, Cron: "0 6 * * *"}

// revenueReport names the report's schedule from one start to the next.
var revenueReport = schedule.ByKey("finance", "revenue-report")

// declaration is what the service declares: its one schedule, under
// grantID.
func (r release) declaration(grantID uuid.UUID) *schedule.Declaration {
	return &schedule.Declaration{
		Service: "reports",
		Version: r.Version,
		Schedules: []*schedule.Params{{
			Owner:    revenueReport.Owner,
			Key:      revenueReport.Key,
			Name:     "revenue report",
			Workflow: ReportWorkflow.Name(),
			Cron:     r.Cron,
			TimeZone: "Europe/London",
			GrantID:  &grantID,
		}},
		// Undeclared: a schedule this service declared before and no
		// longer declares is paused (the default), not deleted.
	}
}

func main() { devdb.Main("scheduled-report", run) } // DATABASE_URL, or a throw-away Postgres; Ctrl-C stops it

func run(ctx context.Context, pool *pgxpool.Pool, out io.Writer) error {
	return start(ctx, pool, out, thisRelease)
}

// start is the service's start-up as release rel, and the rest of the
// example.
func start(ctx context.Context, pool *pgxpool.Pool, out io.Writer, rel release) error {
	if _, err := pool.Exec(ctx, setupSQL); err != nil {
		return err
	}
	client, err := workflow.NewClient(pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}}},
		Workflows: []workflow.Registrable{ReportWorkflow, PurgeOrders},
	})
	if err != nil {
		return err
	}
	schedules, err := schedule.New(client, nil)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer client.Stop(context.WithoutCancel(ctx)) //nolint:errcheck // best effort on the way out

	grant, err := reportingGrant(ctx, pool, schedules, out)
	if err != nil {
		return err
	}
	declared, err := schedules.Declare(ctx, rel.declaration(grant.ID))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Declared the schedules of service %s, version %d: %s\n", declared.Service, declared.Version, declared)
	report, err := schedules.Get(ctx, revenueReport)
	if err != nil {
		return err
	}
	if report.Paused { // by an operator: a declaration leaves pausing and resuming to them
		fmt.Fprintf(out, "The revenue report is paused: %s\n", report.PauseNote)
	} else {
		fmt.Fprintf(out, "Next revenue report: %s\n", inZone(report, *report.NextFireAt))
	}

	// No need to wait for 06:00: trigger the report now, outside the cron.
	runID, err := schedules.Trigger(ctx, revenueReport, nil)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := ReportWorkflow.Handle(client, runID).Result(waitCtx)
	if err != nil {
		return fmt.Errorf("report run %s: %w", runID, err)
	}
	fmt.Fprintf(out, "Triggered the report: report #%d, %d orders, revenue %d; subject=%s, from the revenue-report schedule: %t\n",
		r.ID, r.Orders, r.Revenue, r.Subject, r.ScheduleID == report.ID)

	// The grant names one workflow type: a schedule of another type under
	// it could never run, so Create refuses it and writes nothing.
	_, err = schedules.Create(ctx, &schedule.Params{
		Name: "purge orders", Owner: "finance", Workflow: PurgeOrders.Name(), Cron: "0 0 * * *", GrantID: &grant.ID,
	})
	if !errors.Is(err, schedule.ErrInvalid) {
		return fmt.Errorf("a purge_orders schedule under the report grant: got %v, want a validation error", err)
	}
	fmt.Fprintf(out, "purge_orders under the same grant is refused: %v\n", err)

	// Rotate the grant. Once it is revoked, the schedule's runs are skipped
	// with the reason, triggered or at their slot, and its chain goes on.
	revoked, err := schedules.RevokeGrant(ctx, grant.ID, "rotated: the next grant replaces it")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Revoked the grant: %s\n", revoked.RevokeReason)
	runID, err = schedules.Trigger(ctx, revenueReport, nil)
	if err != nil {
		return err
	}
	skipped, err := client.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Triggered the report again: %s, reason %q\n", skipped.Status, skipped.SkipReason)

	// A revocation is final: the service declares its schedule under the
	// next grant, as its next start would with the new grant configured.
	next, err := reportingGrant(ctx, pool, schedules, out)
	if err != nil {
		return err
	}
	declared, err = schedules.Declare(ctx, rel.declaration(next.ID))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Declared under the next grant: %s\n", declared)
	return nil
}

// reportingGrant is the service's grant, which report_settings names: that
// one while it is live, else a new one (the first time, or after a
// revocation), stored in its place. In a real service an administrator
// issues the grant, and the service reads its id from its configuration.
func reportingGrant(ctx context.Context, pool *pgxpool.Pool, schedules *schedule.Client, out io.Writer) (*schedule.Grant, error) {
	var id uuid.UUID
	err := pool.QueryRow(ctx, `SELECT grant_id FROM report_settings WHERE service = 'reports'`).Scan(&id)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	if err == nil {
		g, err := schedules.GetGrant(ctx, id)
		if err != nil && !errors.Is(err, schedule.ErrGrantNotFound) {
			return nil, err
		}
		if err == nil && g.Check(ReportWorkflow.Name(), time.Now()) == nil {
			fmt.Fprintf(out, "The service's grant: %s for %s, scopes %v\n", g.ID, g.Subject, g.Scopes)
			return g, nil
		}
	}
	var g *schedule.Grant
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		g, err = schedules.CreateGrantTx(ctx, tx, &schedule.GrantParams{
			Subject: "reporting-bot",
			Scopes:  []string{schedule.ScopeExecute(ReportWorkflow.Name())}, // "workflow:execute:report"
		})
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO report_settings (service, grant_id) VALUES ('reports', $1)
			ON CONFLICT (service) DO UPDATE SET grant_id = excluded.grant_id`, g.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "Issued a grant: %s for %s, scopes %v\n", g.ID, g.Subject, g.Scopes)
	return g, nil
}

const dayTime = "Mon 2 Jan 15:04 MST"

// inZone formats t in the schedule's time zone.
func inZone(s *schedule.Schedule, t time.Time) string {
	spec, err := s.Spec()
	if err != nil {
		return t.UTC().Format(dayTime)
	}
	return t.In(spec.Location()).Format(dayTime)
}
