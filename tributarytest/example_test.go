package tributarytest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/tributarytest"
	"github.com/tributary-go/tributary/workflow"
)

// Onboarding reminds a new user after 30 days unless they confirmed their
// address meanwhile.
var Onboarding = workflow.Define("onboarding", func(ctx workflow.Context, email string) (string, error) {
	_, err := workflow.WaitSignal[string](ctx, "confirmed", &workflow.WaitOpts{Timeout: 30 * 24 * time.Hour})
	if err == nil {
		return "confirmed", nil
	}
	if !errors.Is(err, workflow.ErrSignalTimeout) {
		return "", err
	}
	return workflow.Step(ctx, "remind", func(context.Context) (string, error) { return "reminded " + email, nil })
}, nil)

// A 30-day reminder, tested in milliseconds: Result moves the virtual clock
// to the signal's timeout as soon as the run has nothing to do but wait.
func Example_reminder() {
	t, done := exampleT() // in a test: the test's *testing.T
	defer done()
	start := time.Date(2031, 1, 6, 9, 0, 0, 0, time.UTC)
	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{Onboarding}, Start: start})

	h, _ := Onboarding.Start(env.Context(), env.Workflows, "ada@example.com", nil)
	out, err := tributarytest.Result(env, h)
	fmt.Println(out, err)
	fmt.Println("finished", env.Now().Sub(start), "later")
	// Output:
	// reminded ada@example.com <nil>
	// finished 720h0m0s later
}

// A signal that arrives before its timeout: the test moves the clock a day,
// sends the signal, and the run completes at that time.
func Example_signalBeforeTimeout() {
	t, done := exampleT()
	defer done()
	start := time.Date(2031, 1, 6, 9, 0, 0, 0, time.UTC)
	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{Onboarding}, Start: start})

	h, _ := Onboarding.Start(env.Context(), env.Workflows, "grace@example.com", nil)
	env.Advance(24 * time.Hour)
	_ = env.Workflows.Signal(env.Context(), h.ID, "confirmed", "yes")
	out, err := tributarytest.Result(env, h)
	fmt.Println(out, err)
	run, _ := h.Get(env.Context())
	fmt.Println("finished at", run.FinishedAt.UTC().Format(time.RFC3339))
	// Output:
	// confirmed <nil>
	// finished at 2031-01-07T09:00:00Z
}

// A daily schedule across the night Paris moves its clocks forward
// (2027-03-28): each slot fires at 08:00 local time.
func Example_scheduleAcrossDST() {
	t, done := exampleT()
	defer done()
	paris, _ := time.LoadLocation("Europe/Paris")
	daily := workflow.Define("daily", func(workflow.Context, struct{}) (string, error) { return "ok", nil }, nil)
	env := tributarytest.New(t, &tributarytest.Config{
		Workflows: []workflow.Registrable{daily},
		Start:     time.Date(2027, 3, 26, 0, 0, 0, 0, paris),
	})

	s, _ := env.Schedules.Create(env.Context(), &schedule.Params{Name: "daily", Workflow: "daily", Cron: "0 8 * * *", TimeZone: "Europe/Paris"})
	env.AdvanceTo(time.Date(2027, 3, 30, 0, 0, 0, 0, paris))
	runs, _ := env.Schedules.History(env.Context(), schedule.Ref{ID: s.ID}, nil)
	for i := len(runs) - 1; i >= 0; i-- {
		fmt.Println(runs[i].FireAt.In(paris).Format("Mon 02 15:04 MST"), "=", runs[i].FireAt.UTC().Format("15:04 UTC"), runs[i].Status)
	}
	// Output:
	// Fri 26 08:00 CET = 07:00 UTC completed
	// Sat 27 08:00 CET = 07:00 UTC completed
	// Sun 28 08:00 CEST = 06:00 UTC completed
	// Mon 29 08:00 CEST = 06:00 UTC completed
}

// Yesterday's production history, replayed against today's code, catches
// a step renamed under runs in flight before a deploy does.
func Example_replay() {
	ship := func(label string) *workflow.Definition[string, string] {
		return workflow.Define("ship", func(ctx workflow.Context, order string) (string, error) {
			if _, err := workflow.Step(ctx, "pack", func(context.Context) (string, error) { return "packed " + order, nil }); err != nil {
				return "", err
			}
			return workflow.Step(ctx, label, func(context.Context) (string, error) { return "labelled " + order, nil })
		}, nil)
	}

	t, done := exampleT()
	defer done()
	yesterday := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{ship("label")}})
	h, _ := ship("label").Start(yesterday.Context(), yesterday.Workflows, "order-7", nil)
	_, _ = tributarytest.Result(yesterday, h)
	history, _ := json.Marshal(yesterday.Run(h.ID)) // or: tributary workflow get --json RUN > testdata/run.json

	today := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{ship("print_label")}})
	err := tributarytest.Replay(today, history)
	var div *workflow.DivergenceError
	fmt.Println(errors.As(err, &div), div.Step, div.Expected)
	// Output:
	// true print_label label
}
