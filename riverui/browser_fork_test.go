package riverui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/browser"
	"github.com/tributary-go/tributary/riverui"
)

// TestBrowserFork clicks "Fork from this step" on the second step of a
// finished run's page, as an operator would, and lands on the new run's
// page, which says what it was forked from. It saves a screenshot at 1280
// px wide in the test's artifact directory (go test -artifacts), and in
// $TRIBUTARY_SHOTS when set.
func TestBrowserFork(t *testing.T) {
	t.Parallel()

	config := &riverui.Config{Prefix: "/ops", Token: "browser-s3cret"}
	b := setupBrowser(t, config)
	ctx := browser.New(t)
	origin := b.base + "/runs/" + b.run.ID.String()

	browser.Do(t, ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(origin),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), config.Token),
		chromedp.Click(chromedp.CSS(`button[data-testid=login]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[data-testid=fork-step]`)),
	)
	require.Equal(t, 3, browser.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("button[data-testid=fork-step]").length`)), "a fork button on each step")
	require.Equal(t, browserSteps[1], browser.Run(t, ctx, chromedp.Evaluate[string](`document.querySelectorAll("button[data-testid=fork-step]")[1].form.step.value`)))

	browser.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`form:has(input[name=step][value="`+browserSteps[1]+`"]) button[data-testid=fork-step]`)),
		chromedp.WaitVisible(chromedp.CSS(`a[data-testid=forked-from]`)),
	)
	location := browser.Run(t, ctx, chromedp.Location())
	require.True(t, strings.HasPrefix(location, b.base+"/runs/"), location)
	require.NotContains(t, location, b.run.ID.String(), "the new run's page")
	require.Equal(t, b.run.ID.String(), visibleText(t, ctx, `a[data-testid=forked-from]`))
	require.Contains(t, visibleText(t, ctx, `main`), "Forked from")
	require.Contains(t, visibleText(t, ctx, `main`), "(at step "+browserSteps[1]+")")
	// The step copied from the origin stands at the timeline's start,
	// labelled as copied, whatever its time in the origin.
	require.Equal(t, browserSteps[0], browser.Run(t, ctx, chromedp.Evaluate[string](`document.querySelector("[data-testid=timeline-row][data-copied=true]").dataset.name`)))
	require.Equal(t, 1, browser.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-testid=timeline-row][data-copied=true]").length`)))

	saveScreenshot(t, ctx, "fork-browser.png")
	browser.NoErrors(t, ctx)
}
