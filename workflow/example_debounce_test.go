package workflow_test

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// Example_debounce indexes a document once for a burst of saves: the three
// saves of doc-1 within half a second start one run, with the last save's
// text, half a second after the last save.
func Example_debounce() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	index := workflow.Define("index_document", func(ctx workflow.Context, text string) (string, error) {
		return workflow.Step(ctx, "index", func(context.Context) (string, error) {
			return "indexed " + text, nil
		})
	}, nil)

	client, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{index},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	// Each save starts the workflow; the saves of one document share a
	// window of half a second, and the run waits at most 5 s however
	// often the user saves.
	opts := &workflow.StartOpts{Debounce: &workflow.Debounce{Key: "doc-1", Period: 500 * time.Millisecond, MaxDelay: 5 * time.Second}}
	var handles []*workflow.Handle[string]
	for _, text := range []string{"draft", "draft, edited", "final"} {
		h, err := index.Start(ctx, client, text, opts)
		if err != nil {
			panic(err)
		}
		handles = append(handles, h)
	}
	fmt.Println("one run:", handles[0].ID == handles[1].ID && handles[1].ID == handles[2].ID)
	fmt.Println("later saves joined it:", handles[1].Existing, handles[2].Existing)

	out, err := handles[0].Result(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// one run: true
	// later saves joined it: true true
	// indexed final
}
