package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Example_overview reads what an application's own health check or alert
// needs: CountRuns counts the runs by status, ListFailures lists the runs
// that failed, with their errors, each at a cost that follows the recent
// runs, not the table's size.
func Example_overview() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	invoice := workflow.Define("invoice", func(ctx workflow.Context, customer string) (string, error) {
		return workflow.Step(ctx, "send", func(context.Context) (string, error) {
			if customer == "" {
				return "", workflow.NonRetryable(errors.New("no customer"))
			}
			return "sent to " + customer, nil
		})
	}, nil)

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{invoice},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	since := time.Now().Add(-time.Hour)
	for _, customer := range []string{"ada", "grace", ""} {
		handle, err := invoice.Start(ctx, client, customer, nil)
		if err != nil {
			panic(err)
		}
		_, _ = handle.Result(ctx) // wait for it to finish, one way or the other
	}

	counts, err := client.CountRuns(ctx, since)
	if err != nil {
		panic(err)
	}
	fmt.Printf("created in the last hour: %d completed, %d failed\n",
		counts.Recent[workflow.StatusCompleted], counts.Recent[workflow.StatusFailed])
	fmt.Printf("in flight: %d pending, %d running\n",
		counts.InFlight[workflow.StatusPending], counts.InFlight[workflow.StatusRunning])

	failures, err := client.ListFailures(ctx, since, 10)
	if err != nil {
		panic(err)
	}
	for _, run := range failures {
		fmt.Printf("%s failed at step %q: %s\n", run.Type, run.Error.Step, run.Error.Message)
	}

	// Output:
	// created in the last hour: 2 completed, 1 failed
	// in flight: 0 pending, 0 running
	// invoice failed at step "send": no customer
}
