// Command scheduled-report runs a report every second under an execution
// grant: the schedule's runs act with the grant's authority, not a user's
// session, and stop the moment the grant is revoked.
//
//	go run ./examples/scheduled-report
//
// It creates a grant for the subject "reporting-bot" scoped to the report
// workflow type only, and a schedule "* * * * * *" (a leading seconds field:
// every second) that runs the report under it. The report reads who it runs
// for, which schedule started it and for which slot from workflow.RunInfo,
// and records a row in the reports table. Once a report is in, it shows that
// the grant does not stretch to another workflow type (creating a
// purge_orders schedule under it is refused with a validation error), then
// revokes the grant and prints the next slot from the schedule's ledger:
// skipped, "grant revoked". The chain of slots goes on; the example deletes
// its schedule when it ends.
//
// It uses DATABASE_URL, or starts a throw-away Postgres when that is unset.
package main

import (
	"context"
	"encoding/json"
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
// subject) and for which slot it runs.
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
INSERT INTO report_orders (id, amount) VALUES (1, 1200), (2, 300), (3, 4500) ON CONFLICT (id) DO NOTHING`

func main() { devdb.Main("scheduled-report", run) } // DATABASE_URL, or a throw-away Postgres; Ctrl-C stops it

func run(ctx context.Context, pool *pgxpool.Pool, out io.Writer) error {
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

	grant, err := schedules.CreateGrant(ctx, &schedule.GrantParams{
		Subject: "reporting-bot",
		Scopes:  []string{schedule.ScopeExecute(ReportWorkflow.Name())}, // "workflow:execute:report"
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Grant for %s, scopes %v\n", grant.Subject, grant.Scopes)

	report, err := createSchedule(ctx, schedules, ReportWorkflow.Name(), grant.ID)
	if err != nil {
		return err
	}
	defer schedules.Delete(context.WithoutCancel(ctx), schedule.ByID(report.ID)) //nolint:errcheck // an every-second schedule must not outlive the example

	ran, err := waitLedger(ctx, schedules, report.ID, func(r *workflow.Run) bool { return r.Status == workflow.StatusCompleted })
	if err != nil {
		return err
	}
	var r Report
	if err := json.Unmarshal(ran.Output, &r); err != nil {
		return err
	}
	fmt.Fprintf(out, "Report #%d for slot %s: %d orders, revenue %d; subject=%s, from the report schedule: %t\n",
		r.ID, r.FireAt.UTC().Format(time.TimeOnly), r.Orders, r.Revenue, r.Subject, r.ScheduleID == report.ID)

	// The grant names one workflow type: a schedule of another type under
	// it could never run, so Create refuses it and writes nothing.
	_, err = createSchedule(ctx, schedules, PurgeOrders.Name(), grant.ID)
	if !errors.Is(err, schedule.ErrInvalid) {
		return fmt.Errorf("a purge_orders schedule under the report grant: got %v, want a validation error", err)
	}
	fmt.Fprintf(out, "purge_orders under the same grant is refused: %v\n", err)

	revoked, err := schedules.RevokeGrant(ctx, grant.ID, "reporting moved to the data warehouse")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Revoked the grant: %s\n", revoked.RevokeReason)
	skipped, err := waitLedger(ctx, schedules, report.ID, func(r *workflow.Run) bool { return r.SkipReason == schedule.SkipReasonGrantRevoked })
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Report ledger: slot %s %s, reason %q\n", skipped.FireAt.UTC().Format(time.TimeOnly), skipped.Status, skipped.SkipReason)

	after, err := schedules.Get(ctx, schedule.ByID(report.ID))
	if err != nil {
		return err
	}
	if after.NextFireAt == nil {
		return fmt.Errorf("schedule %s: the chain of slots ended", report.ID)
	}
	fmt.Fprintf(out, "The chain goes on: next slot %s, %d runs so far\n", after.NextFireAt.UTC().Format(time.TimeOnly), after.RunCount)
	return nil
}

// createSchedule creates an every-second schedule of workflow typ under the
// grant.
func createSchedule(ctx context.Context, schedules *schedule.Client, typ string, grantID uuid.UUID) (*schedule.Schedule, error) {
	return schedules.Create(ctx, &schedule.Params{
		Name:     typ + " every second",
		Owner:    "finance",
		Workflow: typ,
		Cron:     "* * * * * *", // seconds, minutes, hours, day of month, month, day of week
		GrantID:  &grantID,
	})
}

// waitLedger polls the schedule's ledger (History, newest first) until a
// run matches, and returns the oldest that does.
func waitLedger(ctx context.Context, schedules *schedule.Client, id uuid.UUID, match func(*workflow.Run) bool) (*workflow.Run, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		runs, err := schedules.History(ctx, schedule.ByID(id), nil)
		if err != nil {
			return nil, err
		}
		for i := len(runs) - 1; i >= 0; i-- {
			if match(runs[i]) {
				return runs[i], nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("schedule %s: no such run in its ledger yet: %w", id, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
