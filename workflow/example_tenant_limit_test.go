package workflow_test

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Example_tenantLimit limits a partner call to one run at a time per
// customer: the second run of customer acme is held back, holding no
// worker, until the first ends, while globex's run goes at once.
func Example_tenantLimit() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	release := make(chan struct{})
	syncPartner := workflow.Define("sync_partner", func(ctx workflow.Context, n int) (int, error) {
		return workflow.Step(ctx, "call", func(context.Context) (int, error) {
			if n == 1 {
				<-release // the first run of acme calls the partner for a while
			}
			return n, nil
		})
	}, &workflow.DefineOpts{TenantLimit: 1})

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{syncPartner},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	first, err := syncPartner.Start(ctx, client, 1, &workflow.StartOpts{Tenant: "acme"})
	if err != nil {
		panic(err)
	}
	for run, _ := first.Get(ctx); run.Status != workflow.StatusRunning; run, _ = first.Get(ctx) {
		time.Sleep(10 * time.Millisecond)
	}
	second, err := syncPartner.Start(ctx, client, 2, &workflow.StartOpts{Tenant: "acme"})
	if err != nil {
		panic(err)
	}
	other, err := syncPartner.Start(ctx, client, 3, &workflow.StartOpts{Tenant: "globex"})
	if err != nil {
		panic(err)
	}
	if out, err := other.Result(ctx); err == nil {
		fmt.Println("globex:", out)
	}
	for run, _ := second.Get(ctx); run.Held == ""; run, _ = second.Get(ctx) {
		time.Sleep(10 * time.Millisecond)
	}
	tenants, err := client.Tenants(ctx, &workflow.TenantParams{Tenant: "acme"})
	if err != nil {
		panic(err)
	}
	fmt.Println("second run of acme held:", tenants[0].Why())

	close(release)
	for _, h := range []*workflow.Handle[int]{first, second} {
		out, err := h.Result(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println("acme:", out)
	}

	// Output:
	// globex: 3
	// second run of acme held: acme has 1 of 1 running
	// acme: 1
	// acme: 2
}
