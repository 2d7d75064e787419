// Package demo is what `tributary demo` runs: a few example workflows that
// show memoized steps, a durable sleep and a signal, started against a real
// database and followed until they finish.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

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

// Decision is the payload of the "decision" signal.
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

// Workflows are the demo's workflow types.
func Workflows() []workflow.Registrable { return []workflow.Registrable{Onboard, Approval} }

// Run starts the demo's runs on pool, follows them until they finish and
// prints what happens on out.
func Run(ctx context.Context, pool *pgxpool.Pool, out io.Writer, logger *slog.Logger) error {
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS demo_accounts (id bigserial PRIMARY KEY, email text NOT NULL)`); err != nil {
		return fmt.Errorf("create demo table: %w", err)
	}
	client, err := workflow.NewClient(pool, &workflow.Config{
		Logger:    logger,
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}}},
		Workflows: Workflows(),
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer client.Stop(context.WithoutCancel(ctx)) //nolint:errcheck // best effort on the way out

	fmt.Fprintln(out, "\n1. Three onboarding runs (quick start: three memoized steps each)")
	var onboards []*workflow.Handle[string]
	for _, name := range []string{"Ada", "Grace", "Edsger"} {
		h, err := Onboard.Start(ctx, client, Signup{Email: strings.ToLower(name) + "@example.com", Name: name}, &workflow.StartOpts{IdempotencyKey: "signup-" + strings.ToLower(name)})
		if err != nil {
			return err
		}
		onboards = append(onboards, h)
	}
	for _, h := range onboards {
		msg, err := h.Result(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "   run %s: %s\n", h.ID, msg)
	}
	if err := printSteps(ctx, client, out, onboards[0].ID); err != nil {
		return err
	}

	fmt.Fprintln(out, "\n2. An approval: a durable 2 s sleep, then a wait for a signal")
	approval, err := Approval.Start(ctx, client, Expense{Amount: 1200, Item: "laptop"}, nil)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, client, approval.ID, workflow.StatusWaiting, out); err != nil {
		return err
	}
	fmt.Fprintln(out, "   sending the decision signal")
	if err := client.Signal(ctx, approval.ID, "decision", Decision{Approved: true, By: "finance"}); err != nil {
		return err
	}
	msg, err := approval.Result(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   run %s: %s\n", approval.ID, msg)
	return printSteps(ctx, client, out, approval.ID)
}

// waitFor prints the run's status as it changes until it reaches want.
func waitFor(ctx context.Context, client *workflow.Client, id [16]byte, want workflow.Status, out io.Writer) error {
	last := workflow.Status("")
	for {
		run, err := client.GetRun(ctx, id)
		if err != nil {
			return err
		}
		if run.Status != last {
			fmt.Fprintf(out, "   status: %s\n", run.Status)
			last = run.Status
		}
		if run.Status == want {
			return nil
		}
		if run.Status.Finished() {
			return fmt.Errorf("run %s ended %s before reaching %s", run.ID, run.Status, want)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func printSteps(ctx context.Context, client *workflow.Client, out io.Writer, id [16]byte) error {
	run, err := client.GetRun(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   steps of %s (attempts: %d):\n", run.ID, run.Attempt)
	for _, s := range run.Steps {
		extra := ""
		if s.WakeAt != nil {
			extra = " wake " + s.WakeAt.Format(time.TimeOnly)
		}
		fmt.Fprintf(out, "     %-16s %-7s %-10s %8s%s\n", s.Name, s.Kind, s.Status, s.Duration().Round(time.Millisecond), extra)
	}
	return nil
}
