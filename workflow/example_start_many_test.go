package workflow_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Example_startMany starts a digest run for each of a batch of users in one
// transaction: their River jobs in one insert and their runs in another,
// as River's InsertMany inserts jobs. A run with an idempotency key that is
// taken already is not started again: its handle says Existing.
func Example_startMany() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	digest := workflow.Define("send_digest", func(ctx workflow.Context, user string) (string, error) {
		return workflow.Step(ctx, "send", func(context.Context) (string, error) {
			return "digest sent to " + user, nil
		})
	}, nil)

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{digest},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	// ana's digest of today was started already.
	if _, err := digest.Start(ctx, client, "ana", &workflow.StartOpts{IdempotencyKey: "ana-2026-11-27"}); err != nil {
		panic(err)
	}

	handles, err := digest.StartMany(ctx, client, []workflow.StartManyParams[string]{
		{Input: "ana", Opts: &workflow.StartOpts{IdempotencyKey: "ana-2026-11-27"}},
		{Input: "ben", Opts: &workflow.StartOpts{Tenant: "acme"}},
		{Input: "chloé", Opts: &workflow.StartOpts{Tenant: "acme"}},
	})
	if err != nil {
		panic(err)
	}
	for _, h := range handles {
		result, err := h.Result(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s (existing: %t)\n", result, h.Existing)
	}

	// Bad input in any run starts none of them, and names the run.
	_, err = digest.StartMany(ctx, client, []workflow.StartManyParams[string]{
		{Input: "dan"},
		{Input: "eve", Opts: &workflow.StartOpts{Tenant: " acme"}},
	})
	fmt.Println(err)

	// Output:
	// digest sent to ana (existing: true)
	// digest sent to ben (existing: false)
	// digest sent to chloé (existing: false)
	// workflow: invalid params[1].StartOpts.Tenant: " acme" has a space at an end; trim it
}
