package schedule_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// Example_createMany onboards a tenant's users at once: each gets a digest
// at 08:00 in their own time zone. The batch is all or nothing: one bad
// time zone refuses it, naming the item.
func Example_createMany() {
	ctx := context.Background()
	db, cleanup := testdb.ForExample()
	defer cleanup()

	digest := workflow.Define("daily_digest", func(ctx workflow.Context, user string) (string, error) {
		return "digest for " + user, nil
	}, nil)

	// An insert-only client: the working clients fire the slots.
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{digest},
	})
	if err != nil {
		panic(err)
	}
	schedules, err := schedule.New(wf, nil)
	if err != nil {
		panic(err)
	}

	users := []struct{ name, zone string }{
		{"alice", "Europe/Paris"},
		{"bob", "Europe/Berlin"},
		{"carol", "America/New_York"},
		{"dave", "Mars/Olympus"},
	}
	var params []*schedule.Params
	for _, u := range users {
		params = append(params, &schedule.Params{
			Name:     "digest for " + u.name,
			Owner:    "tenant-42",
			Workflow: "daily_digest",
			Input:    u.name,
			Cron:     "0 8 * * *",
			TimeZone: u.zone,
		})
	}

	_, err = schedules.CreateMany(ctx, params)
	var item *schedule.ItemError
	if errors.As(err, &item) {
		fmt.Printf("refused: item %d (%s), invalid: %t\n", item.Index, item.Name, errors.Is(err, schedule.ErrInvalid))
	}
	all, err := schedules.List(ctx, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("schedules:", len(all))

	params = params[:3] // dave's zone fixed later
	created, err := schedules.CreateMany(ctx, params)
	if err != nil {
		panic(err)
	}
	instants := map[time.Time]bool{}
	for _, s := range created {
		loc, err := time.LoadLocation(s.TimeZone)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: first at %s in %s\n", s.Name, s.NextFireAt.In(loc).Format("15:04"), s.TimeZone)
		instants[*s.NextFireAt] = true
	}
	// Paris and Berlin share their 08:00, and its fire job.
	fmt.Println("distinct first slots:", len(instants))

	// Output:
	// refused: item 3 (digest for dave), invalid: true
	// schedules: 0
	// digest for alice: first at 08:00 in Europe/Paris
	// digest for bob: first at 08:00 in Europe/Berlin
	// digest for carol: first at 08:00 in America/New_York
	// distinct first slots: 2
}
