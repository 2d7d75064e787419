package workflow_test

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// retryNow retries failed attempts at once, to keep examples fast.
type retryNow struct{}

func (retryNow) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// Example_signal shows a run that waits for an approval. The signal is sent
// right after the start, possibly before the run reaches WaitSignal: a
// signal that arrives early is kept, never lost.
func Example_signal() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	type approval struct {
		By string `json:"by"`
	}
	refund := workflow.Define("refund", func(ctx workflow.Context, amount int) (string, error) {
		a, err := workflow.WaitSignal[approval](ctx, "approved", &workflow.WaitOpts{Timeout: 24 * time.Hour})
		if err != nil {
			return "", err // also returned while the run is parked waiting
		}
		return fmt.Sprintf("refunded %d, approved by %s", amount, a.By), nil
	}, nil)

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{refund},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	handle, err := refund.Start(ctx, client, 30, nil)
	if err != nil {
		panic(err)
	}
	if err := client.Signal(ctx, handle.ID, "approved", approval{By: "support lead"}); err != nil {
		panic(err)
	}
	result, err := handle.Result(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(result)

	// Output:
	// refunded 30, approved by support lead
}
