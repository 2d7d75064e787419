package workflow_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Example_step shows replay: the second step fails on the first attempt,
// River retries the run, and the replay returns the first step's memoized
// result instead of charging the card again.
func Example_step() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	var charges, shipAttempts int
	checkout := workflow.Define("checkout", func(ctx workflow.Context, orderID int) (string, error) {
		chargeID, err := workflow.Step(ctx, "charge", func(context.Context) (string, error) {
			charges++
			return fmt.Sprintf("ch_%d", orderID), nil
		})
		if err != nil {
			return "", err
		}
		return workflow.Step(ctx, "ship", func(context.Context) (string, error) {
			if shipAttempts++; shipAttempts == 1 {
				return "", errors.New("warehouse API timed out")
			}
			return "shipped, paid with " + chargeID, nil
		})
	}, nil)

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		River: &river.Config{
			Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}},
			RetryPolicy: retryNow{}, // River's backoff would wait a second
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{checkout},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	handle, err := checkout.Start(ctx, client, 42, nil)
	if err != nil {
		panic(err)
	}
	result, err := handle.Result(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(result)
	fmt.Printf("charged %d time(s), ship tried %d time(s)\n", charges, shipAttempts)

	// Output:
	// shipped, paid with ch_42
	// charged 1 time(s), ship tried 2 time(s)
}
