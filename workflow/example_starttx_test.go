package workflow_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Example_startTx starts a run inside the application's own transaction:
// the order row and the run commit together, or neither exists.
func Example_startTx() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	fulfil := workflow.Define("fulfil_order", func(ctx workflow.Context, orderID int64) (string, error) {
		return workflow.Step(ctx, "pack", func(context.Context) (string, error) {
			return fmt.Sprintf("order %d packed", orderID), nil
		})
	}, nil)

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{fulfil},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	if _, err := db.Pool.Exec(ctx, "CREATE TABLE orders (id bigserial PRIMARY KEY)"); err != nil {
		panic(err)
	}

	// A rolled-back transaction leaves neither an order nor a run.
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		panic(err)
	}
	if _, err := fulfil.StartTx(ctx, client, tx, 0, nil); err != nil {
		panic(err)
	}
	_ = tx.Rollback(ctx)

	var handle *workflow.Handle[string]
	err = pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
		var orderID int64
		if err := tx.QueryRow(ctx, "INSERT INTO orders DEFAULT VALUES RETURNING id").Scan(&orderID); err != nil {
			return err
		}
		handle, err = fulfil.StartTx(ctx, client, tx, orderID, nil)
		return err
	})
	if err != nil {
		panic(err)
	}
	result, err := handle.Result(ctx)
	if err != nil {
		panic(err)
	}
	runs, err := client.ListRuns(ctx, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(result)
	fmt.Println("runs:", len(runs))

	// Output:
	// order 1 packed
	// runs: 1
}
