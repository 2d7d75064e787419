// Command approval runs a purchase approval: a workflow that waits a
// cooling-off period, then waits for a person's decision, sent to it as a
// signal from outside, and acts on it, or gives up when nobody decides in
// time.
//
//	go run ./examples/approval
//
// It starts three runs. The first is approved and the second rejected by a
// signal sent once each run is waiting for it; nobody answers the third, whose
// wait times out after half a second (WaitSignal returns ErrSignalTimeout).
// While a run sleeps or waits it holds no worker: its River job is parked
// until the wake-up time or the signal. It prints each outcome, then the
// steps of the approved run.
//
// It uses DATABASE_URL, or starts a throw-away Postgres when that is unset.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/devdb"
	"github.com/tributary-go/tributary/workflow"
)

// Purchase is the approval workflow's input.
type Purchase struct {
	Item   string `json:"item"`
	Amount int    `json:"amount"`
	// DecideWithin bounds the wait for a decision.
	DecideWithin time.Duration `json:"decide_within"`
}

// Decision is the payload of the "approval" signal.
type Decision struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`
	Comment  string `json:"comment,omitempty"`
}

// coolingOff is how long a purchase request waits before it can be decided.
// A real one would be hours; a durable sleep of days costs nothing.
const coolingOff = time.Second

// Approval sleeps through the cooling-off period, waits for a Decision and
// acts on it. Each wait is memoized like a step: after a restart the run
// picks up where it was, with the same wake-up times.
var Approval = workflow.Define("approval", func(ctx workflow.Context, p Purchase) (string, error) {
	if err := workflow.Sleep(ctx, "cooling_off", coolingOff); err != nil {
		return "", err // also returned while the run sleeps: the attempt ends here
	}

	decision, err := workflow.WaitSignal[Decision](ctx, "approval", &workflow.WaitOpts{Timeout: p.DecideWithin})
	if errors.Is(err, workflow.ErrSignalTimeout) {
		return workflow.Step(ctx, "expire", func(context.Context) (string, error) {
			return fmt.Sprintf("%s (%d): no decision within %s, request expired", p.Item, p.Amount, p.DecideWithin), nil
		})
	}
	if err != nil {
		return "", err // also returned while the run waits
	}

	return workflow.Step(ctx, "act", func(context.Context) (string, error) {
		if !decision.Approved {
			return fmt.Sprintf("%s (%d): rejected by %s (%s)", p.Item, p.Amount, decision.By, decision.Comment), nil
		}
		return fmt.Sprintf("%s (%d): approved by %s, order placed", p.Item, p.Amount, decision.By), nil // stand-in for a purchasing API call
	})
}, nil)

func main() { devdb.Main("approval", run) } // DATABASE_URL, or a throw-away Postgres; Ctrl-C stops it

func run(ctx context.Context, pool *pgxpool.Pool, out io.Writer) error {
	client, err := workflow.NewClient(pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}}},
		Workflows: []workflow.Registrable{Approval},
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer client.Stop(context.WithoutCancel(ctx)) //nolint:errcheck // best effort on the way out

	requests := []struct {
		purchase Purchase
		decision *Decision // nil: nobody answers
	}{
		{Purchase{Item: "laptop", Amount: 1200, DecideWithin: time.Minute}, &Decision{Approved: true, By: "finance"}},
		{Purchase{Item: "yacht", Amount: 900000, DecideWithin: time.Minute}, &Decision{Approved: false, By: "finance", Comment: "over budget"}},
		{Purchase{Item: "coffee machine", Amount: 300, DecideWithin: 500 * time.Millisecond}, nil},
	}
	var handles []*workflow.Handle[string]
	for _, r := range requests {
		h, err := Approval.Start(ctx, client, r.purchase, nil)
		if err != nil {
			return err
		}
		handles = append(handles, h)
	}
	fmt.Fprintf(out, "Started %d approval runs; each sleeps %s, then waits for a decision\n", len(handles), coolingOff)

	// The decisions come from outside the workflow, as an HTTP handler would
	// send them: a signal sent early would be kept, but a person answers
	// only once the request is in front of them.
	for i, r := range requests {
		if r.decision == nil {
			continue
		}
		if err := waitStatus(ctx, client, handles[i].ID, workflow.StatusWaiting, 30*time.Second); err != nil {
			return err
		}
		if err := client.Signal(ctx, handles[i].ID, "approval", r.decision); err != nil {
			return err
		}
		fmt.Fprintf(out, "Signalled %s: approved=%t\n", r.purchase.Item, r.decision.Approved)
	}

	for _, h := range handles {
		resultCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		outcome, err := h.Result(resultCtx)
		cancel()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Outcome: %s\n", outcome)
	}

	for _, h := range []*workflow.Handle[string]{handles[0], handles[2]} {
		if err := printSteps(ctx, client, out, h.ID); err != nil {
			return err
		}
	}
	return nil
}

// printSteps prints a run's step records: the memos a replay reads.
func printSteps(ctx context.Context, client *workflow.Client, out io.Writer, id uuid.UUID) error {
	run, err := client.GetRun(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Steps of run %s (%s, attempts: %d):\n", id, run.Status, run.Attempt)
	for _, s := range run.Steps {
		wake := "-"
		if s.WakeAt != nil { // a sleep's wake-up time, or a wait's deadline
			wake = s.WakeAt.UTC().Format("15:04:05.000 MST")
		}
		if s.Error != nil {
			wake += ", " + s.Error.Kind // a wait's timeout is memoized like a result
		}
		fmt.Fprintf(out, "  %-16s %-7s %-10s wake: %s\n", s.Name, s.Kind, s.Status, wake)
	}
	return nil
}

// waitStatus polls run id until it reaches want. There is no notification
// for a run that starts waiting, so a caller that must know polls.
func waitStatus(ctx context.Context, client *workflow.Client, id uuid.UUID, want workflow.Status, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		run, err := client.GetRun(ctx, id)
		switch {
		case err != nil:
			return err
		case run.Status == want:
			return nil
		case run.Status.Finished():
			return fmt.Errorf("run %s ended %s before it was %s", id, run.Status, want)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("run %s still %s, want %s: %w", id, run.Status, want, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
