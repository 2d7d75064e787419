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

// Example_tenantRate calls a partner at most 10 times a second per
// customer: acme's 20 calls take about 2 seconds, none fails, and a rate
// with no period is refused before anything is written.
func Example_tenantRate() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	callPartner := workflow.Define("call_partner", func(ctx workflow.Context, n int) (time.Time, error) {
		return workflow.Step(ctx, "call", func(context.Context) (time.Time, error) {
			return time.Now(), nil // the partner's API, called at this time
		})
	}, &workflow.DefineOpts{TenantRate: workflow.Rate{Limit: 10, Per: time.Second}})

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{callPartner},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	var handles []*workflow.Handle[time.Time]
	for i := range 20 {
		h, err := callPartner.Start(ctx, client, i, &workflow.StartOpts{Tenant: "acme"})
		if err != nil {
			panic(err)
		}
		handles = append(handles, h)
	}
	var first, last time.Time
	for i, h := range handles {
		at, err := h.Result(ctx)
		if err != nil {
			panic(err)
		}
		if i == 0 || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	fmt.Println("20 calls of acme, none failed; they took over 1.5 s:", last.Sub(first) > 1500*time.Millisecond)

	bad := workflow.Define("bad_rate", func(ctx workflow.Context, n int) (int, error) { return n, nil },
		&workflow.DefineOpts{TenantRate: workflow.Rate{Limit: 10}})
	_, err = workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema, Workflows: []workflow.Registrable{bad}})
	var invalid *workflow.ValidationError
	fmt.Println(errors.As(err, &invalid), invalid.Field)
	// Output:
	// 20 calls of acme, none failed; they took over 1.5 s: true
	// true DefineOpts.TenantRate.Per
}
