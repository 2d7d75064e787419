package riverui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/browser"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
)

// TestBrowserGrants drives the grants pages as an operator would, signed
// in: a grant created from the Grants page, a schedule under it whose next
// slot comes after the grant expires (its page warns), and the grant's
// page listing the schedule. It saves screenshots at 1280 px wide in the
// test's artifact directory (go test -artifacts), and in $TRIBUTARY_SHOTS
// when set.
func TestBrowserGrants(t *testing.T) {
	t.Parallel()

	config := &riverui.Config{Prefix: "/ops", Token: "browser-s3cret"}
	b := setupBrowser(t, config)
	ctx := browser.New(t)
	scope := schedule.ScopeExecute(browserDigest.Name())

	browser.Do(t, ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(b.base+"/grants"),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), config.Token),
		chromedp.Click(chromedp.CSS(`button[data-testid=login]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[data-testid=new-grant-form]`)),
		chromedp.SendKeys(chromedp.CSS(`form[data-testid=new-grant-form] input[name=subject]`), "user-42"),
		chromedp.SendKeys(chromedp.CSS(`form[data-testid=new-grant-form] input[name=scopes]`), scope),
		chromedp.SendKeys(chromedp.CSS(`form[data-testid=new-grant-form] input[name=expires_in]`), "2h"),
		chromedp.Click(chromedp.CSS(`button[data-testid=create-grant]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash]`)),
	)
	require.Equal(t, "user-42", visibleText(t, ctx, `[data-testid=grant-subject]`))
	require.Equal(t, "active", visibleText(t, ctx, `[data-testid=grant-state]`))
	grants, err := b.sc.ListGrants(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, grants, 1)
	g := grants[0]
	require.Equal(t, []string{scope}, g.Scopes)

	// A schedule whose next slot, in 2098, comes after the grant expires.
	s, err := b.sc.Create(t.Context(), &schedule.Params{Name: "digest for 42", Workflow: browserDigest.Name(), Cron: "0 9 * * *",
		TimeZone: "Europe/Paris", StartAt: time.Date(2098, 1, 1, 0, 0, 0, 0, time.UTC), GrantID: &g.ID})
	require.NoError(t, err)
	other, err := b.sc.CreateGrant(t.Context(), &schedule.GrantParams{Subject: "reports-bot", Scopes: []string{"*"}})
	require.NoError(t, err)
	_, err = b.sc.RevokeGrant(t.Context(), other.ID, "rotated")
	require.NoError(t, err)

	browser.Do(t, ctx,
		chromedp.Navigate(b.base+"/grants?revoked=1"),
		chromedp.WaitVisible(chromedp.CSS(`table[data-testid=grants]`)),
	)
	require.Equal(t, 2, browser.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr[data-testid=grant-row]").length`)))
	saveScreenshot(t, ctx, "grants-list.png")

	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`tr[data-id="`+g.ID.String()+`"] a[data-testid=grant-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`table[data-testid=grant-schedules]`)),
	)
	require.Contains(t, visibleText(t, ctx, `[data-testid=grant-schedule-warning]`), "before the next slot at 2098-01-01 09:00 CET")
	saveScreenshot(t, ctx, "grants-grant.png")

	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`a[data-testid=grant-schedule-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=grant-warning]`)),
	)
	require.Equal(t, b.base+"/schedules/"+s.ID.String(), browser.Run(t, ctx, chromedp.Location()))
	require.Contains(t, visibleText(t, ctx, `[data-testid=grant-warning]`), "that slot and every one after it will be skipped (grant expired)")
	require.Equal(t, "user-42", visibleText(t, ctx, `a[data-testid=schedule-grant]`))
	require.Equal(t, scope, visibleText(t, ctx, `[data-testid=schedule-grant-scopes]`))
	saveScreenshot(t, ctx, "grants-schedule.png")

	// At a phone's width the grants pages are no wider than the screen.
	browser.Do(t, ctx, chromedp.EmulateViewport(390, 844))
	for _, path := range []string{"/grants?revoked=1", "/grants/" + g.ID.String()} {
		browser.Do(t, ctx, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(`main`)))
		wide := browser.Run(t, ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
		require.LessOrEqual(t, wide, 0, "%s is %d px wider than a 390 px screen", path, wide)
	}
	browser.NoErrors(t, ctx)
}
