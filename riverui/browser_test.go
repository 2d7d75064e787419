package riverui_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/browser"
	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// browserSteps are the steps of the workflow TestBrowser runs, in order.
var browserSteps = []string{"fetch", "render", "send"}

// browserDigest is a workflow with the steps of browserSteps.
var browserDigest = workflow.Define("browser_digest", func(ctx workflow.Context, user string) (string, error) {
	out := user
	for _, name := range browserSteps {
		var err error
		if out, err = workflow.Step(ctx, name, func(context.Context) (string, error) {
			return out + " " + name, nil
		}); err != nil {
			return "", err
		}
	}
	return out, nil
}, nil)

// browserBundle is a server with the Handler for TestBrowser, on a client
// that works browserDigest, with one schedule and one completed run.
type browserBundle struct {
	base     string // the server's URL and the Handler's prefix
	run      *workflow.Run
	schedule *schedule.Schedule
	sc       *schedule.Client
}

func setupBrowser(t *testing.T, config *riverui.Config) *browserBundle {
	t.Helper()

	db := testdb.New(t)
	ctx := t.Context()

	sc := schedule.New(nil)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Extensions: []workflow.Extension{sc},
		River:      &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}},
		Schema:     db.Schema,
		Workflows:  []workflow.Registrable{browserDigest},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	h, err := riverui.New(wf, sc, config)
	require.NoError(t, err)
	uiCtx, stopUI := context.WithCancel(context.Background())
	require.NoError(t, h.Start(uiCtx))
	server := httptest.NewServer(h)
	t.Cleanup(func() {
		server.Close()
		stopUI()
	})

	s, err := sc.Create(ctx, &schedule.Params{Name: "nightly digest", Workflow: browserDigest.Name(), Cron: "0 3 * * *", TimeZone: "Europe/Paris"})
	require.NoError(t, err)

	handle, err := browserDigest.Start(ctx, wf, "ada", nil)
	require.NoError(t, err)
	resultCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := handle.Result(resultCtx)
	require.NoError(t, err)
	require.Equal(t, "ada fetch render send", out)
	run, err := handle.Get(ctx)
	require.NoError(t, err)

	return &browserBundle{base: server.URL + config.Prefix, run: run, schedule: s, sc: sc}
}

// TestBrowser drives the dashboard and River UI in a headless Chromium, as
// an operator would: sign in, pause and edit a schedule, look at a run's
// steps, open River UI's job list. It skips when Chromium is not installed (see
// internal/browser). Prefix runs under /ops with a token, so it signs in and
// River UI's requests carry the session cookie; Root runs at / without one.
func TestBrowser(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name   string
		config *riverui.Config
	}{
		{"Prefix", &riverui.Config{Prefix: "/ops", Token: "browser-s3cret"}},
		{"Root", &riverui.Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			b := setupBrowser(t, tc.config)
			ctx := browser.New(t)

			if tc.config.Token != "" {
				browser.Do(t, ctx,
					chromedp.Navigate(b.base+"/login"),
					chromedp.SendKeys(chromedp.CSS(`input[name=token]`), tc.config.Token),
					chromedp.Click(chromedp.CSS(`button[data-testid=login]`)),
				)
			} else {
				browser.Do(t, ctx, chromedp.Navigate(b.base+"/"))
			}

			// The schedules page lists the schedule.
			row := fmt.Sprintf(`tr[data-testid=schedule-row][data-name=%q]`, b.schedule.Name)
			browser.Do(t, ctx,
				chromedp.WaitVisible(chromedp.CSS(`table[data-testid=schedules]`)),
				chromedp.Click(chromedp.CSS(row+` a[data-testid=schedule-link]`)),
			)

			// Its page pauses it.
			browser.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`button[data-testid=pause]`)))
			require.Equal(t, "active", visibleText(t, ctx, `[data-testid=schedule-state]`))
			browser.Do(t, ctx,
				chromedp.Click(chromedp.CSS(`button[data-testid=pause]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash]`)),
			)
			require.Equal(t, "paused", visibleText(t, ctx, `[data-testid=schedule-state]`))
			s, err := b.sc.Get(t.Context(), b.schedule.ID)
			require.NoError(t, err)
			require.True(t, s.Paused, "the schedule is not paused in the database")

			// Its edit page changes its cron expression.
			browser.Do(t, ctx,
				chromedp.Click(chromedp.CSS(`a[data-testid=edit]`)),
				chromedp.WaitVisible(chromedp.CSS(`form[data-testid=edit-form]`)),
				chromedp.SetValue(chromedp.CSS(`input[name=cron]`), "30 4 * * 1-5"),
				chromedp.Click(chromedp.CSS(`button[data-testid=save]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash]`)),
			)
			require.Contains(t, visibleText(t, ctx, `[data-testid=flash]`), "Schedule updated.")
			s, err = b.sc.Get(t.Context(), b.schedule.ID)
			require.NoError(t, err)
			require.Equal(t, "30 4 * * 1-5", s.Cron, "the schedule's cron is not changed in the database")
			require.Equal(t, "Europe/Paris", s.TimeZone)

			// The runs page leads to the run and its steps.
			runLink := fmt.Sprintf(`a[data-testid=run-link][href$=%q]`, "/runs/"+b.run.ID.String())
			browser.Do(t, ctx,
				chromedp.Click(chromedp.CSS(`a[data-testid=nav-runs]`)),
				chromedp.WaitVisible(chromedp.CSS(`table[data-testid=runs]`)),
				chromedp.Click(chromedp.CSS(runLink)),
				chromedp.WaitVisible(chromedp.CSS(`table[data-testid=steps]`)),
			)
			require.Equal(t, "completed", visibleText(t, ctx, `[data-testid=run-status]`))
			for _, step := range browserSteps {
				browser.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`table[data-testid=steps] tr[data-testid=step][data-name=%q]`, step))))
			}
			browser.NoErrors(t, ctx)

			// The run's River job opens in River UI, a React app that loads
			// its data with XHR (with the session cookie when signed in).
			browser.Do(t, ctx,
				chromedp.Click(chromedp.CSS(`a[data-testid=river-job]`)),
				browser.WaitText(browserDigest.Kind()), // not on the run's page
			)
			require.Equal(t, fmt.Sprintf("%s/riverui/jobs/%d", b.base, b.run.JobID), browser.Run(t, ctx, chromedp.Location()))
			browser.Do(t, ctx,
				chromedp.Navigate(b.base+"/riverui/jobs?state=completed"),
				browser.WaitText(browserDigest.Kind()),
			)
			browser.NoErrors(t, ctx)
		})
	}
}

// visibleText returns the trimmed visible text of the first element that
// sel matches.
func visibleText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()

	return strings.TrimSpace(browser.Run(t, ctx, chromedp.Text(chromedp.CSS(sel))))
}
