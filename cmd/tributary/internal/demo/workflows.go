package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/workflow"
)

// Signup is the input of Onboard.
type Signup struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

// Onboard is the quick-start workflow: create an account (exactly once, in a
// transaction with its memo), render a welcome message, send it.
var Onboard = workflow.Define("demo_onboard", func(ctx workflow.Context, in Signup) (string, error) {
	accountID, err := workflow.StepTx(ctx, "create_account", func(ctx context.Context, tx pgx.Tx) (int64, error) {
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO demo_accounts (email) VALUES ($1) RETURNING id`, in.Email).Scan(&id)
		return id, err
	})
	if err != nil {
		return "", err
	}
	message, err := workflow.Step(ctx, "render_welcome", func(context.Context) (string, error) {
		return fmt.Sprintf("Welcome aboard, %s (account %d)", in.Name, accountID), nil
	})
	if err != nil {
		return "", err
	}
	_, err = workflow.Step(ctx, "send_email", func(context.Context) (bool, error) { return true, nil })
	return message, err
}, nil)

// Expense is the input of Approval.
type Expense struct {
	Amount int    `json:"amount"`
	Item   string `json:"item"`
}

// Decision is the payload of Approval's "decision" signal.
type Decision struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`
}

// Approval sleeps for a cooling-off period, then waits for a decision
// signal (at most an hour), then acts on it. While it sleeps and waits it
// holds no worker.
var Approval = workflow.Define("demo_approval", func(ctx workflow.Context, in Expense) (string, error) {
	if err := workflow.Sleep(ctx, "cooling_off", 2*time.Second); err != nil {
		return "", err
	}
	decision, err := workflow.WaitSignal[Decision](ctx, "decision", &workflow.WaitOpts{Timeout: time.Hour})
	if errors.Is(err, workflow.ErrSignalTimeout) {
		return "no decision within an hour: " + in.Item + " not bought", nil
	}
	if err != nil {
		return "", err
	}
	return workflow.Step(ctx, "act", func(context.Context) (string, error) {
		if !decision.Approved {
			return fmt.Sprintf("%s (%d) rejected by %s", in.Item, in.Amount, decision.By), nil
		}
		return fmt.Sprintf("%s (%d) approved by %s and ordered", in.Item, in.Amount, decision.By), nil
	})
}, nil)

// ReminderDelay is how long a Reminder run sleeps before it sends.
const ReminderDelay = 5 * time.Minute

// Note is the input of Reminder.
type Note struct {
	Text string `json:"text"`
	To   string `json:"to"`
}

// Reminder sleeps ReminderDelay (durably: a restart does not start the
// wait over), then sends its note.
var Reminder = workflow.Define("demo_reminder", func(ctx workflow.Context, in Note) (string, error) {
	if err := workflow.Sleep(ctx, "wait", ReminderDelay); err != nil {
		return "", err
	}
	return workflow.Step(ctx, "send_reminder", func(context.Context) (string, error) {
		return fmt.Sprintf("reminded %s: %s", in.To, in.Text), nil
	})
}, nil)

// Probe is the input of Heartbeat.
type Probe struct {
	Service string `json:"service"`
}

// Heartbeat is what the demo-heartbeat schedule runs every 10 seconds: it
// checks the database and records the result, in two steps.
var Heartbeat = workflow.Define("demo_heartbeat", func(ctx workflow.Context, in Probe) (string, error) {
	accounts, err := countAccounts(ctx, "check_database")
	if err != nil {
		return "", err
	}
	return workflow.Step(ctx, "record", func(context.Context) (string, error) {
		return fmt.Sprintf("%s healthy, %d accounts", in.Service, accounts), nil
	})
}, nil)

// Period is the input of Report.
type Period struct {
	Period string `json:"period"`
}

// Report is what the daily and weekly report schedules run: it counts the
// accounts created and renders a one-line report.
var Report = workflow.Define("demo_report", func(ctx workflow.Context, in Period) (string, error) {
	accounts, err := countAccounts(ctx, "count_accounts")
	if err != nil {
		return "", err
	}
	return workflow.Step(ctx, "render", func(context.Context) (string, error) {
		return fmt.Sprintf("%s report: %d accounts", in.Period, accounts), nil
	})
}, nil)

// countAccounts is a step, named step, that counts the accounts Onboard
// created.
func countAccounts(ctx workflow.Context, step string) (int64, error) {
	return workflow.StepTx(ctx, step, func(ctx context.Context, tx pgx.Tx) (int64, error) {
		var n int64
		err := tx.QueryRow(ctx, `SELECT count(*) FROM demo_accounts`).Scan(&n)
		return n, err
	})
}

// Workflows are the demo's workflow types.
func Workflows() []workflow.Registrable {
	return []workflow.Registrable{Approval, Charge, Export, Heartbeat, Onboard, Reminder, Report}
}

// ExportTenant is the tenant of the demo's Export runs.
const ExportTenant = "demo-tenant"

// ExportDuration is how long an Export run works.
const ExportDuration = 6 * time.Second

// ExportJob is the input of Export.
type ExportJob struct {
	Table string `json:"table"`
}

// Export works ExportDuration in one step, holding a worker and its
// tenant's slot: its type lets 1 run of a tenant work at once
// (TenantLimit), so the other runs of the tenant are held, pending, until
// it ends. A stopping client cuts it short; it runs again.
var Export = workflow.Define("demo_tenant_export", func(ctx workflow.Context, in ExportJob) (string, error) {
	return workflow.Step(ctx, "export", func(ctx context.Context) (string, error) {
		select {
		case <-time.After(ExportDuration):
			return fmt.Sprintf("exported %s for %s", in.Table, ExportTenant), nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
}, &workflow.DefineOpts{TenantLimit: 1})

// Charge fails for good: the card is declined, a NonRetryable error, so the
// run fails on its first attempt, and the dashboard shows it failed, with
// its step and error.
var Charge = workflow.Define("demo_charge", func(ctx workflow.Context, in Expense) (string, error) {
	return workflow.Step(ctx, "charge_card", func(context.Context) (string, error) {
		return "", workflow.NonRetryable(fmt.Errorf("card declined for %s (%d): insufficient funds", in.Item, in.Amount))
	})
}, nil)
