package riverui_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/browser"
	"github.com/tributary-go/tributary/schedule"
)

// TestBrowserOwnerPauseConfirm drives an owner's "Pause all" as an
// operator would: the first click only counts and asks to confirm; Confirm
// pauses them, with the note. Then the search box finds a schedule by a
// part of its name. It saves screenshots of each step in the test's
// artifact directory (go test -artifacts).
func TestBrowserOwnerPauseConfirm(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	a := d.createSchedule(t, &schedule.Params{Name: "morning digest", Owner: "acme", Cron: "0 8 * * *"})
	d.createSchedule(t, &schedule.Params{Name: "weekly report", Owner: "acme", Cron: "0 9 * * MON"})
	ctx := browser.New(t)

	browser.Do(t, ctx,
		chromedp.Navigate(d.server.URL+"/tenants/acme"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=owner-pause-all] input[name=note]`), "incident 42"),
		chromedp.Click(chromedp.CSS(`[data-testid=owner-pause-all] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=owner-bulk-confirm]`)),
	)
	require.Equal(t, `Pause 2 of acme's 2 schedules (0 paused already)? Their slots are skipped while they are paused. Note: "incident 42".`,
		visibleText(t, ctx, `[data-testid=owner-bulk-count]`))
	s, err := d.sc.Get(t.Context(), schedule.ByID(a.ID))
	require.NoError(t, err)
	require.False(t, s.Paused, "the first click only counts")
	saveScreenshot(t, ctx, "owner-pause-confirm.png")

	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=owner-bulk-confirm-button]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=owner-bulk-done]`)),
	)
	require.Equal(t, "Paused 2 schedules of acme; 0 left as they were (paused already).", visibleText(t, ctx, `[data-testid=owner-bulk-done]`))
	s, err = d.sc.Get(t.Context(), schedule.ByID(a.ID))
	require.NoError(t, err)
	require.True(t, s.Paused)
	require.Equal(t, "incident 42", s.PauseNote)
	saveScreenshot(t, ctx, "owner-paused.png")

	// The search box finds a schedule by a part of its name through the
	// schedules page's name filter.
	browser.Do(t, ctx,
		chromedp.SendKeys(chromedp.CSS(`[data-testid=search] input[name=q]`), "DIGEST\n"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=name-link]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=name-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`table[data-testid=schedules]`)),
	)
	require.Equal(t, "morning digest", visibleText(t, ctx, `[data-testid=schedule-link]`))
	require.Equal(t, 1, browser.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-testid=schedule-row]").length`)))
	saveScreenshot(t, ctx, "schedules-by-name.png")
	browser.NoErrors(t, ctx)
}
