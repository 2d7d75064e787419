package browser

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tributary-go/tributary/internal/testlog"
)

// saveFailure saves what a failed test's tab shows — screenshot.png,
// page.html, console.txt (every console message) and chromium.txt
// (Chromium's own output) — and logs the directory. browserCtx is New's
// context without the test's deadline, so a test that ran out of time can
// still be looked at.
func saveFailure(t testing.TB, browserCtx context.Context, rec *recorder, output *testlog.Buffer) {
	dir, err := artifactDir(t)
	if err != nil {
		t.Logf("browser: saving the page of the failed test: %v", err)
		return
	}

	ctx, cancel := context.WithTimeout(browserCtx, closeTimeout/2)
	defer cancel()

	files := map[string][]byte{"chromium.txt": []byte(output.String())}
	rec.mu.Lock()
	files["console.txt"] = []byte(strings.Join(rec.messages, "\n") + "\n")
	rec.mu.Unlock()
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		files["screenshot.png"] = png
	} else {
		t.Logf("browser: taking a screenshot of the failed test's page: %v", err)
	}
	if html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html"))); err == nil {
		files["page.html"] = []byte("<!-- " + location(ctx) + " -->\n" + html)
	} else {
		t.Logf("browser: reading the failed test's page: %v", err)
	}

	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Logf("browser: %v", err)
		}
	}
	t.Logf("browser: the failed test's page is saved in %s (screenshot.png, page.html, console.txt, chromium.txt)", dir)
}
