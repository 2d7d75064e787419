package riverui_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/browser"
	"github.com/tributary-go/tributary/riverui"
)

// TestBrowserTenants drives the tenants page as an operator would, signed
// in: a held run's page says why it waits and leads to its tenant, whose
// limit the operator raises from the tenants page. It saves screenshots of
// both pages in the test's artifact directory (go test -artifacts).
func TestBrowserTenants(t *testing.T) {
	t.Parallel()

	config := &riverui.Config{Prefix: "/ops", Token: "browser-s3cret"}
	f := newHeldFixture(t, config)
	ctx := browser.New(t)
	base := f.server.URL + config.Prefix
	// A page with a run in flight reloads itself; hold keeps the one
	// shown, as an operator's typing does.
	hold := chromedp.Evaluate[bool](`document.dispatchEvent(new Event("input")), true`)

	browser.Do(t, ctx,
		chromedp.Navigate(base+"/runs/"+f.held[0].String()),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), config.Token),
		chromedp.Click(chromedp.CSS(`button[data-testid=login]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=run-held]`)),
	)
	require.True(t, browser.Run(t, ctx, hold))
	require.Equal(t, "pending", visibleText(t, ctx, `[data-testid=run-status]`))
	require.Contains(t, visibleText(t, ctx, `[data-testid=run-held]`), "Waiting: acme has 1 of 1 running (the workflow type's limit).")
	saveScreenshot(t, ctx, "held-run.png")

	// The tenant: 1 running, 2 held, the type's limit.
	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=run-held] a`)),
		chromedp.WaitVisible(chromedp.CSS(`table[data-testid=tenants]`)),
	)
	require.True(t, browser.Run(t, ctx, hold))
	require.Equal(t, "1", visibleText(t, ctx, `[data-testid=tenant-running]`))
	require.Equal(t, "2", visibleText(t, ctx, `[data-testid=tenant-held]`))
	require.Equal(t, "1 (the workflow type's limit)", visibleText(t, ctx, `[data-testid=tenant-limit]`))
	saveScreenshot(t, ctx, "tenants.png")

	// Raising its limit to 3 starts the held runs.
	browser.Do(t, ctx,
		chromedp.SetValue(chromedp.CSS(`input[data-testid=limit-max]`), "3"),
		chromedp.Click(chromedp.CSS(`button[data-testid=set-limit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=flash]`)),
	)
	require.True(t, browser.Run(t, ctx, hold))
	require.Contains(t, visibleText(t, ctx, `[data-testid=flash]`), "Tenant limit set.")
	require.Equal(t, "3 (limit set for the tenant)", visibleText(t, ctx, `[data-testid=tenant-limit]`))
	limits, err := f.wf.TenantLimits(t.Context())
	require.NoError(t, err)
	require.Len(t, limits, 1)
	require.Equal(t, 3, limits[0].MaxRunning)
	browser.NoErrors(t, ctx)

	// At a phone's width the page is no wider than the screen.
	browser.Do(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/tenants"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	require.True(t, browser.Run(t, ctx, hold))
	wide := browser.Run(t, ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
	require.LessOrEqual(t, wide, 0, "/tenants is %d px wider than a 390 px screen", wide)
}
