package schedule_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// Example_declare declares a service's schedules in code, as its main does
// at every start-up: the first start creates them, a restart (or a second
// replica) changes nothing, and a deploy that changes the code updates
// them in place. A key per user makes a per-user schedule safe to create
// at every start-up too.
func Example_declare() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	report := workflow.Define("report", func(ctx workflow.Context, to string) (string, error) {
		return "sent to " + to, nil
	}, nil)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema, Workflows: []workflow.Registrable{report}})
	if err != nil {
		panic(err)
	}
	schedules, err := schedule.New(wf, nil)
	if err != nil {
		panic(err)
	}

	declare := func(version int64, cron string) {
		res, err := schedules.Declare(ctx, &schedule.Declaration{
			Service: "reports",
			Version: version, // larger at each deploy: an old replica never undoes a new one
			Schedules: []*schedule.Params{
				{Key: "nightly-report", Name: "nightly report", Workflow: "report", Input: "ops@example.com", Cron: cron, TimeZone: "Europe/Paris"},
				{Key: "weekly-summary", Name: "weekly summary", Workflow: "report", Input: "ceo@example.com", Cron: "0 9 * * 1"},
			},
		})
		if err != nil {
			panic(err)
		}
		fmt.Println(res)
	}
	declare(1, "0 2 * * *") // the first start
	declare(1, "0 2 * * *") // a restart, or another replica
	declare(2, "0 3 * * *") // a deploy that moves the report

	// A user's schedule, created at every start-up of the service.
	for range 2 {
		s, err := schedules.Create(ctx, &schedule.Params{
			Owner: "user-42", Key: "digest", Name: "digest", Workflow: "report", Input: "ada@example.com",
			Cron: "0 8 * * *", TimeZone: "America/New_York",
		})
		if err != nil {
			panic(err)
		}
		fmt.Println("digest of user-42 existed already:", s.Existing)
	}
	_, err = schedules.Create(ctx, &schedule.Params{
		Owner: "user-42", Key: "digest", Name: "digest", Workflow: "report", Input: "ada@example.com",
		Cron: "0 7 * * *", TimeZone: "America/New_York",
	})
	var conflict *schedule.KeyConflictError
	if errors.As(err, &conflict) {
		fmt.Println("another spec:", conflict.Diffs[0])
	}
	s, err := schedules.Get(ctx, schedule.ByKey("user-42", "digest"))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Cron, s.TimeZone)

	// Output:
	// created nightly-report; created weekly-summary
	// 2 unchanged
	// updated nightly-report: Cron "0 2 * * *" → "0 3 * * *"; 1 unchanged
	// digest of user-42 existed already: false
	// digest of user-42 existed already: true
	// another spec: Cron "0 8 * * *" → "0 7 * * *"
	// 0 8 * * * America/New_York
}
