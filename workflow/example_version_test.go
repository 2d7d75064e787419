package workflow_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Example_version changes a workflow while a run of it is in flight. The
// first deploy notifies by email and then waits for a delivery signal. The
// second notifies by SMS instead, behind a Version call: the run started
// before the deploy, already past its email, keeps the email path when it
// replays; a run started after the deploy takes the SMS path, and its
// choice is recorded, so that every replay of it takes the same path.
//
// Without the Version call, the old run would replay "sms" where its
// history has "email" and fail with a *DivergenceError instead of sending
// a second notification.
func Example_version() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	emailed := make(chan struct{}, 1) // the first deploy's email step ran
	notify := func(channel string) func(context.Context) (string, error) {
		return func(context.Context) (string, error) {
			if channel == "email" {
				emailed <- struct{}{}
			}
			return "sent by " + channel, nil
		}
	}

	// The first deploy.
	v1 := workflow.Define("notify", func(ctx workflow.Context, user string) (string, error) {
		sent, err := workflow.Step(ctx, "email", notify("email"))
		if err != nil {
			return "", err
		}
		if _, err := workflow.WaitSignal[string](ctx, "delivered", nil); err != nil {
			return "", err
		}
		return user + ": " + sent, nil
	}, nil)

	// The second deploy: SMS for new runs, email for runs past this point.
	v2 := workflow.Define("notify", func(ctx workflow.Context, user string) (string, error) {
		v, err := workflow.Version(ctx, "sms-instead-of-email", workflow.DefaultVersion, 1)
		if err != nil {
			return "", err
		}
		var sent string
		if v == workflow.DefaultVersion {
			sent, err = workflow.Step(ctx, "email", notify("email"))
		} else {
			sent, err = workflow.Step(ctx, "sms", notify("sms"))
		}
		if err != nil {
			return "", err
		}
		if _, err := workflow.WaitSignal[string](ctx, "delivered", nil); err != nil {
			return "", err
		}
		return user + ": " + sent, nil
	}, nil)

	// Ada's run starts under the first deploy and parks in WaitSignal.
	first := startVersionClient(ctx, db.Pool, db.Schema, v1)
	ada, err := v1.Start(ctx, first, "ada", nil)
	if err != nil {
		panic(err)
	}
	<-emailed
	// Stop waits for the attempt, which parks in WaitSignal.
	if err := first.Stop(ctx); err != nil {
		panic(err)
	}

	// The second deploy; Bob's run starts under it.
	second := startVersionClient(ctx, db.Pool, db.Schema, v2)
	defer second.Stop(ctx) //nolint:errcheck
	bob, err := v2.Start(ctx, second, "bob", nil)
	if err != nil {
		panic(err)
	}

	ada = v2.Handle(second, ada.ID) // the first client is gone
	for _, run := range []*workflow.Handle[string]{ada, bob} {
		if err := second.Signal(ctx, run.ID, "delivered", "ok"); err != nil {
			panic(err)
		}
		result, err := run.Result(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(result)
	}

	run, err := second.GetRun(ctx, bob.ID)
	if err != nil {
		panic(err)
	}
	for _, step := range run.Steps {
		fmt.Printf("bob's run: %s %s %s\n", step.Kind, step.Name, step.Output)
	}

	// Output:
	// ada: sent by email
	// bob: sent by sms
	// bob's run: version version:sms-instead-of-email 1
	// bob's run: step sms "sent by sms"
	// bob's run: signal signal:delivered "ok"
}

func startVersionClient(ctx context.Context, pool *pgxpool.Pool, schema string, def workflow.Registrable) *workflow.Client {
	client, err := workflow.NewClient(pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}},
		Schema:    schema,
		Workflows: []workflow.Registrable{def},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	return client
}
