package riverui_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
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

// saveScreenshot saves a screenshot of the page ctx shows, as name, in the
// test's artifact directory (go test -artifacts), and in $TRIBUTARY_SHOTS
// when set.
func saveScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := browser.Run(t, ctx, chromedp.FullScreenshot(100))
	require.NoError(t, os.WriteFile(filepath.Join(t.ArtifactDir(), name), png, 0o644))
	if dir := os.Getenv("TRIBUTARY_SHOTS"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	}
}

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

// browserApproval waits for the signal "approve", then says who approved.
var browserApproval = workflow.Define("browser_approval", func(ctx workflow.Context, item string) (string, error) {
	by, err := workflow.WaitSignal[string](ctx, "approve", nil)
	if err != nil {
		return "", err
	}
	return item + " approved by " + by, nil
}, nil)

// browserBundle is a server with the Handler for TestBrowser, on a client
// that works browserDigest, with one schedule, one schedule declared with
// a key (keyed, at keyedPath) and one completed run.
type browserBundle struct {
	base     string // the server's URL and the Handler's prefix
	run      *workflow.Run
	schedule *schedule.Schedule
	keyed    *schedule.Schedule
	sc       *schedule.Client
	wf       *workflow.Client
}

// keyedPath is the dashboard path of browserBundle.keyed, under its key.
const keyedPath = "/schedules/digest:user@42?owner=acme"

func setupBrowser(t *testing.T, config *riverui.Config) *browserBundle {
	t.Helper()

	db := testdb.New(t)
	ctx := t.Context()

	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{browserDigest, browserApproval},
	})
	require.NoError(t, err)
	sc, err := schedule.New(wf, nil)
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
	declared, err := sc.Declare(ctx, &schedule.Declaration{Service: "reports", Schedules: []*schedule.Params{
		{Name: "digest for user 42", Owner: "acme", Key: "digest:user@42", Workflow: browserDigest.Name(), Input: "user-42", Cron: "0 8 * * *", TimeZone: "Europe/Paris"},
	}})
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

	return &browserBundle{base: server.URL + config.Prefix, run: run, schedule: s, keyed: declared.Decisions[0].Schedule, sc: sc, wf: wf}
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
					// Signing in lands on the overview.
					chromedp.WaitVisible(chromedp.CSS(`ul[data-testid=recent]`)),
				)
			}
			browser.Do(t, ctx, chromedp.Navigate(b.base+"/schedules"))

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
			s, err := b.sc.Get(t.Context(), schedule.ByID(b.schedule.ID))
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
			s, err = b.sc.Get(t.Context(), schedule.ByID(b.schedule.ID))
			require.NoError(t, err)
			require.Equal(t, "30 4 * * 1-5", s.Cron, "the schedule's cron is not changed in the database")
			require.Equal(t, "Europe/Paris", s.TimeZone)

			// A schedule with a key opens under its key URL, says where it
			// comes from, and its actions come back to that URL.
			keyedRow := fmt.Sprintf(`tr[data-testid=schedule-row][data-name=%q]`, b.keyed.Name)
			browser.Do(t, ctx,
				chromedp.Click(chromedp.CSS(`a[data-testid=nav-schedules]`)),
				chromedp.WaitVisible(chromedp.CSS(keyedRow+` [data-testid=schedule-key]`)),
				chromedp.Click(chromedp.CSS(keyedRow+` a[data-testid=schedule-link]`)),
				chromedp.WaitVisible(chromedp.CSS(`dd [data-testid=schedule-key]`)),
			)
			require.Equal(t, b.base+keyedPath, browser.Run(t, ctx, chromedp.Location()))
			require.Equal(t, "digest:user@42", visibleText(t, ctx, `dd [data-testid=schedule-key]`))
			require.Equal(t, "declared by service reports", visibleText(t, ctx, `[data-testid=schedule-origin]`))
			require.Equal(t, "acme (the owner)", visibleText(t, ctx, `[data-testid=schedule-tenant]`))
			require.Contains(t, visibleText(t, ctx, `[data-testid=declared]`), "an edit here lasts only until the service's next declaration")
			browser.Do(t, ctx,
				chromedp.Click(chromedp.CSS(`button[data-testid=trigger]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash-run]`)),
			)
			require.True(t, strings.HasPrefix(browser.Run(t, ctx, chromedp.Location()), b.base+"/schedules/digest:user@42?notice=triggered&owner=acme&run="))
			require.Equal(t, "digest for user 42", visibleText(t, ctx, `[data-testid=schedule-name]`))

			// The runs page leads to the run and its steps. The schedule's
			// page reloads itself every 5 s while the run just triggered is
			// in flight, so the nav link is clicked in the page, in one
			// step: chromedp.Click resolves the node first and fails with
			// "Could not find node with given id" when a reload comes in
			// between (seen once in CI, on a loaded machine).
			runLink := fmt.Sprintf(`a[data-testid=run-link][href$=%q]`, "/runs/"+b.run.ID.String())
			browser.Run(t, ctx, chromedp.Evaluate[bool](`(document.querySelector("a[data-testid=nav-runs]").click(), true)`))
			browser.Do(t, ctx,
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

// waitTrue waits until the JavaScript expression is true, on the page
// shown or on the next one (it survives a reload), checking every 100 ms
// until the step's deadline.
func waitTrue(expr string) chromedp.Action[chromedp.Void] {
	check := chromedp.Evaluate[bool](expr)
	return func(ctx context.Context, target *chromedp.Target) (chromedp.Void, error) {
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		for {
			if ok, err := check(ctx, target); err == nil && ok {
				return chromedp.Void{}, nil
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, fmt.Errorf("waiting for %s: %w", expr, ctx.Err())
			case <-ticker.C:
			}
		}
	}
}

// visibleText returns the trimmed visible text of the first element that
// sel matches.
//
// One evaluation finds the element and reads its text: a page that
// refreshes itself (a run's, while the run is unfinished) can replace the
// element between chromedp.Text's look-up and its read ("No node with
// given id found", seen in CI on a forked run's page). An element not
// there yet, or a page between two loads, is looked for again, every 50
// ms for up to 10 s.
func visibleText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()

	js := `(() => { const e = document.querySelector(` + strconv.Quote(sel) + `); return e ? e.innerText : null })()`
	deadline := time.Now().Add(10 * time.Second)
	for {
		text, err := chromedp.Run(ctx, chromedp.Evaluate[*string](js))
		if err == nil && text != nil {
			return strings.TrimSpace(*text)
		}
		if time.Now().After(deadline) {
			t.Fatalf("browser: no element %s to read within 10 s (last error: %v)", sel, err)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("browser: reading %s: %v", sel, ctx.Err())
		}
	}
}

// TestBrowserOperator drives what an operator does at 3 a.m., signed in
// with a token: the overview, a search of the runs, a run's timeline, a
// signal to a waiting run whose page refreshes itself, a new schedule
// whose form first refuses a bad cron expression, and one of an RRULE.
// Every page is checked at a phone's width too, for content wider than
// the screen.
func TestBrowserOperator(t *testing.T) {
	t.Parallel()

	config := &riverui.Config{Prefix: "/ops", Token: "browser-s3cret"}
	b := setupBrowser(t, config)
	ctx := browser.New(t)
	waiting, err := browserApproval.Start(t.Context(), b.wf, "laptop", &workflow.StartOpts{IdempotencyKey: "expense-7", Metadata: map[string]any{"team": "ops"}, Tenant: "acme"})
	require.NoError(t, err)

	browser.Do(t, ctx,
		chromedp.Navigate(b.base+"/"),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), config.Token),
		chromedp.Click(chromedp.CSS(`button[data-testid=login]`)),
		chromedp.WaitVisible(chromedp.CSS(`ul[data-testid=recent]`)),
	)
	// A page with a run in flight reloads itself every few seconds; hold
	// keeps the one shown, as an operator's typing does, so that a slow
	// machine's reload does not pull it from under the next action.
	hold := chromedp.Evaluate[bool](`document.dispatchEvent(new Event("input")), true`)
	require.True(t, browser.Run(t, ctx, hold))
	require.Equal(t, b.base+"/", browser.Run(t, ctx, chromedp.Location()))
	require.Equal(t, "1", visibleText(t, ctx, `ul[data-testid=recent] a[data-status=completed] .count`))
	require.Equal(t, "1", visibleText(t, ctx, `ul[data-testid=in-flight] a[data-status=waiting] .count`))

	// The runs page finds the waiting run by its idempotency key, and by
	// its metadata.
	for _, search := range []string{"expense-7", "team=ops"} {
		browser.Do(t, ctx,
			chromedp.Click(chromedp.CSS(`a[data-testid=nav-runs]`)),
			chromedp.WaitVisible(chromedp.CSS(`input[data-testid=search]`)),
		)
		require.True(t, browser.Run(t, ctx, hold))
		browser.Do(t, ctx,
			chromedp.SendKeys(chromedp.CSS(`input[data-testid=search]`), search),
			chromedp.Click(chromedp.CSS(`button[data-testid=apply-filters]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=searched]`)),
		)
		require.True(t, browser.Run(t, ctx, hold))
		require.Equal(t, 1, browser.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr[data-testid=run-row]").length`)), search)
	}

	// The tenant field keeps the tenant's runs: the waiting run, not the
	// completed one (which has none).
	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`a[data-testid=nav-runs]`)),
		chromedp.WaitVisible(chromedp.CSS(`input[data-testid=tenant-filter]`)),
	)
	require.True(t, browser.Run(t, ctx, hold))
	browser.Do(t, ctx,
		chromedp.SendKeys(chromedp.CSS(`input[data-testid=tenant-filter]`), "acme"),
		chromedp.Click(chromedp.CSS(`button[data-testid=apply-filters]`)),
		chromedp.WaitVisible(chromedp.CSS(`a[data-testid=clear-filters]`)),
	)
	require.True(t, browser.Run(t, ctx, hold))
	require.Contains(t, browser.Run(t, ctx, chromedp.Location()), "&tenant=acme&")
	require.Equal(t, 1, browser.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr[data-testid=run-row]").length`)))
	require.Equal(t, "acme", visibleText(t, ctx, `td[data-testid=run-tenant]`))

	// The run's page: its timeline, and the signal form filled with the
	// name the run waits for. It refreshes itself, but not while the
	// operator types.
	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`a[data-testid=run-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`figure[data-testid=timeline]`)),
	)
	require.Equal(t, "approve", browser.Run(t, ctx, chromedp.Evaluate[string](`document.querySelector("form[data-testid=signal] input[name=name]").value`)))
	require.Equal(t, "acme", visibleText(t, ctx, `[data-testid=run-tenant]`))
	require.True(t, browser.Run(t, ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)))
	browser.Do(t, ctx,
		waitTrue(`window.notReloaded !== true && document.readyState === "complete"`), // a new page
		chromedp.WaitVisible(chromedp.CSS(`form[data-testid=signal]`)),
	)
	require.True(t, browser.Run(t, ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)))
	browser.Do(t, ctx,
		chromedp.SendKeys(chromedp.CSS(`form[data-testid=signal] textarea[name=payload]`), `"ada"`),
		browser.WaitText("Auto-refresh paused while you edit a form."),
	)
	require.True(t, browser.Run(t, ctx, chromedp.Evaluate[bool](`window.notReloaded === true`)), "the page reloaded while the operator typed")
	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`button[data-testid=send-signal]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash]`)),
	)
	resultCtx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := waiting.Result(resultCtx)
	require.NoError(t, err)
	require.Equal(t, "laptop approved by ada", out)

	// A new schedule: a bad cron expression is refused beside its field,
	// with what was typed kept (the DST policy chosen too); fixed, the
	// schedule's page opens and says the policy.
	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`a[data-testid=nav-schedules]`)),
		chromedp.Click(chromedp.CSS(`a[data-testid=new-schedule]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[data-testid=new-schedule-form]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "weekly approvals"),
		chromedp.SendKeys(chromedp.CSS(`input[name=workflow]`), browserApproval.Name()),
		chromedp.SendKeys(chromedp.CSS(`input[name=cron]`), "0 9 * * MON-FRI-X"),
		chromedp.SendKeys(chromedp.CSS(`input[name=time_zone]`), "Europe/Paris"),
		chromedp.SendKeys(chromedp.CSS(`input[name=tenant]`), "acme-eu"),
		chromedp.SendKeys(chromedp.CSS(`textarea[name=input]`), `"laptop"`),
		chromedp.SetValue(chromedp.CSS(`select[name=dst_gap]`), "skip"),
		chromedp.Click(chromedp.CSS(`button[data-testid=create]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=field-error]`)),
	)
	require.Contains(t, visibleText(t, ctx, `[data-testid=field-error]`), "bad cron expression")
	require.Equal(t, "weekly approvals", browser.Run(t, ctx, chromedp.Evaluate[string](`document.querySelector("input[name=name]").value`)))
	require.Equal(t, "skip", browser.Run(t, ctx, chromedp.Evaluate[string](`document.querySelector("select[name=dst_gap]").value`)))
	browser.Do(t, ctx,
		chromedp.SetValue(chromedp.CSS(`input[name=cron]`), "0 9 * * 1"),
		chromedp.Click(chromedp.CSS(`button[data-testid=create]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash]`)),
	)
	require.Equal(t, "weekly approvals", visibleText(t, ctx, `[data-testid=schedule-name]`))
	require.Equal(t, "acme-eu", visibleText(t, ctx, `[data-testid=schedule-tenant]`), "the tenant typed, kept through the refused form")
	require.True(t, strings.HasPrefix(visibleText(t, ctx, `[data-testid=schedule-dst]`), "gap skip (a time the clocks jump over does not run"), "the DST policy chosen, kept through the refused form")
	require.Contains(t, browser.Run(t, ctx, chromedp.Location()), b.base+"/schedules/")
	noErrorsBut(t, ctx, "400 (Bad Request) ["+b.base+"/schedules/new]") // the refused form

	// An RRULE in place of a cron expression: chosen, its textarea takes
	// the cron field's place; the schedule's page shows the rule on its
	// two lines and its next fire times.
	browser.Do(t, ctx,
		chromedp.Navigate(b.base+"/schedules/new"),
		chromedp.WaitVisible(chromedp.CSS(`form[data-testid=new-schedule-form]`)),
		chromedp.WaitNotVisible(chromedp.CSS(`textarea[name=rrule]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "fortnightly approvals"),
		chromedp.SendKeys(chromedp.CSS(`input[name=workflow]`), browserApproval.Name()),
		chromedp.Click(chromedp.CSS(`input[name=rule][value=rrule]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=rrule]`)),
		chromedp.WaitNotVisible(chromedp.CSS(`input[name=cron]`)),
		chromedp.SendKeys(chromedp.CSS(`textarea[name=rrule]`), fortnightly),
		chromedp.SendKeys(chromedp.CSS(`input[name=time_zone]`), "Europe/Paris"),
		chromedp.Click(chromedp.CSS(`button[data-testid=create]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash]`)),
	)
	require.Equal(t, "fortnightly approvals", visibleText(t, ctx, `[data-testid=schedule-name]`))
	require.Equal(t, fortnightly, visibleText(t, ctx, `[data-testid=schedule-rrule]`))
	require.Equal(t, 10, browser.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("ol[data-testid=next-fires] li").length`)))
	rruleSchedule := browser.Run(t, ctx, chromedp.Location())

	// A holiday calendar from the Calendars page: dates a line, a range
	// among them; its page lists each date with its note.
	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`a[data-testid=nav-calendars]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[data-testid=new-calendar-form]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "winter-break"),
		chromedp.SendKeys(chromedp.CSS(`textarea[name=dates]`), "2098-12-24..2098-12-26 Christmas\n2098-12-31 New Year's Eve"),
		chromedp.Click(chromedp.CSS(`button[data-testid=create-calendar]`)),
		chromedp.WaitVisible(chromedp.CSS(`table[data-testid=calendar-dates]`)),
	)
	require.Equal(t, "winter-break", visibleText(t, ctx, `[data-testid=calendar-name]`))
	require.Equal(t, 4, browser.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr[data-testid=date-row]").length`)))
	require.Equal(t, "New Year's Eve", visibleText(t, ctx, `tr[data-date="2098-12-31"] [data-testid=date-note]`))

	// At a phone's width no page is wider than the screen: tables scroll
	// in their own box.
	browser.Do(t, ctx, chromedp.EmulateViewport(390, 844))
	for _, path := range []string{"/", "/runs", "/runs?q=team%3Dops", "/runs?tenant=acme", "/runs/" + waiting.ID.String(), "/runs/" + b.run.ID.String(), "/schedules", "/schedules/new", "/schedules/" + b.schedule.ID.String(), keyedPath, strings.TrimPrefix(rruleSchedule, b.base), "/calendars", "/calendars/winter-break", "/tenants", "/tenants/acme", "/grants", "/search?q=acme"} {
		browser.Do(t, ctx,
			chromedp.Navigate(b.base+path),
			chromedp.WaitVisible(chromedp.CSS(`main`)),
		)
		require.True(t, browser.Run(t, ctx, hold))
		wide := browser.Run(t, ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
		require.LessOrEqual(t, wide, 0, "%s is %d px wider than a 390 px screen", path, wide)
	}
	noErrorsBut(t, ctx, "400 (Bad Request) ["+b.base+"/schedules/new]")
}

// noErrorsBut is browser.NoErrors, but for the errors that contain want:
// a form answered with its error has the status of the error.
func noErrorsBut(t *testing.T, ctx context.Context, want string) {
	t.Helper()

	for _, e := range browser.Errors(ctx) {
		require.Contains(t, e, want)
	}
}
