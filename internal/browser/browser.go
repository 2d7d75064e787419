// Package browser runs end-to-end tests in a real headless Chromium, driven
// by github.com/chromedp/chromedp: one browser per test, with a fresh
// profile, a deadline, a record of the page's JavaScript errors, and a
// screenshot and the page's HTML saved when the test fails.
//
//	func TestDashboard(t *testing.T) {
//		t.Parallel()
//
//		ctx := browser.New(t) // skips when Chromium is not installed
//		browser.Do(t, ctx,
//			chromedp.Navigate(server.URL),
//			chromedp.WaitVisible(chromedp.CSS(`table[data-testid=runs]`)),
//		)
//		browser.NoErrors(t, ctx)
//	}
//
// Chromium is found by Find: CHROMIUM_PATH when set, else chromium,
// chromium-browser or google-chrome on PATH, else /usr/bin/chromium. Without
// one, New skips the test and says how to install it. Set CHROMIUM_PATH to a
// file that does not exist (CHROMIUM_PATH=none) to skip browser tests on a
// machine that has Chromium.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tributary-go/tributary/internal/testlog"
)

const (
	// Timeout bounds a test's whole browser session, from New to the end of
	// its last action. It is generous because `go test ./...` runs packages
	// in parallel and a busy machine starts Chromium slowly.
	Timeout = 90 * time.Second

	// StepTimeout bounds one call of Do or Run, so that a wait for an
	// element that never shows up fails with the step that waited.
	StepTimeout = 30 * time.Second

	// closeTimeout bounds saving the page of a failed test and closing the
	// browser gracefully; after it the browser process is killed.
	closeTimeout = 20 * time.Second
)

// notInstalled is the reason New gives when it skips a test.
const notInstalled = "browser test skipped: Chromium is not installed; install it with `apt-get install -y chromium` or set CHROMIUM_PATH"

// candidates are the programs Find looks for on PATH, in order.
var candidates = []string{"chromium", "chromium-browser", "google-chrome"}

// fallback is where Debian's chromium package puts its launcher, tried when
// PATH does not lead to a browser.
const fallback = "/usr/bin/chromium"

// Find returns the path of the Chromium to run: CHROMIUM_PATH when it is
// set, else the first of chromium, chromium-browser and google-chrome on
// PATH, else /usr/bin/chromium. ok is false when there is none, or when
// CHROMIUM_PATH names a file that is not an executable.
func Find() (path string, ok bool) {
	return find(os.Getenv("CHROMIUM_PATH"), exec.LookPath)
}

func find(envPath string, lookPath func(string) (string, error)) (string, bool) {
	if envPath != "" {
		// An explicit choice is never second-guessed: a missing file means
		// no browser, which is how a machine with Chromium opts out.
		return envPath, isExecutable(envPath)
	}
	for _, name := range candidates {
		if path, err := lookPath(name); err == nil {
			return path, true
		}
	}
	return fallback, isExecutable(fallback)
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// New starts a headless Chromium for t, with a fresh profile in
// t.TempDir(), and returns the context to drive its tab with: pass it to Do
// and Run, or to chromedp.Run. The context ends after Timeout. New skips t,
// saying why and how to install Chromium, when Find finds no browser.
//
// The page's exceptions and console errors are recorded from the start, for
// Errors and NoErrors. When t ends, a cleanup saves the page if t failed
// (screenshot, HTML, console and Chromium's output, in a directory it logs;
// under go test -artifacts, in t.ArtifactDir()), then closes the browser and
// waits for its process to exit, so neither a goroutine nor a process
// outlives the test.
func New(t testing.TB) context.Context {
	t.Helper()

	path, ok := Find()
	if !ok {
		if env := os.Getenv("CHROMIUM_PATH"); env != "" {
			t.Skipf("%s (CHROMIUM_PATH=%s is not an executable file)", notInstalled, env)
		}
		t.Skip(notInstalled)
	}

	// TempDir's removal is registered first, so it runs after the cleanup
	// below has waited for the browser, which writes there until it exits.
	profile := t.TempDir()
	output := &testlog.Buffer{}

	// hardCtx bounds the browser process itself, including start-up and
	// the cleanup's grace period; a test's actions get the shorter Timeout
	// so that a timed-out test's page can still be saved.
	hardCtx, cancelHard := context.WithTimeout(context.Background(), Timeout+closeTimeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(hardCtx,
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox, // the sandbox fails as root and in most containers
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		// /dev/shm is 64 MB in a default container, and Chromium crashes
		// when it fills up.
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(output),
	)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)

	rec := &recorder{}
	closeBrowser := func() {
		closeCtx, cancel := context.WithTimeout(browserCtx, closeTimeout)
		defer cancel()
		// A graceful close lets Chromium stop its helper processes; the
		// allocator's cancel then waits for the main process to exit.
		if err := chromedp.Cancel(closeCtx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			t.Logf("browser: closing Chromium: %v", err)
		}
		cancelBrowser()
		cancelAlloc()
		cancelHard()
	}

	// The first use of browserCtx starts Chromium and binds its lifetime to
	// browserCtx, so it must carry no shorter deadline than hardCtx's.
	if err := chromedp.Listen(browserCtx, rec.record); err != nil {
		closeBrowser()
		t.Fatalf("browser: starting %s: %v\nChromium's output:\n%s", path, err, output.String())
	}

	ctx, cancelTimeout := context.WithTimeout(browserCtx, Timeout)
	ctx = context.WithValue(ctx, recorderKey{}, rec)
	t.Cleanup(func() {
		cancelTimeout()
		if t.Failed() {
			saveFailure(t, browserCtx, rec, output)
		}
		closeBrowser()
	})
	return ctx
}

// Do runs actions in order in the tab of ctx, a context from New, each
// within StepTimeout, and fails t with the failed action's position, its
// error, the page's URL and the page's errors so far.
func Do(t testing.TB, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()

	for i, action := range actions {
		if _, err := run(ctx, action); err != nil {
			t.Fatalf("browser: action %d of %d: %v (page %s)%s", i+1, len(actions), err, location(ctx), formatErrors(Errors(ctx)))
		}
	}
}

// Run runs one action that returns a value, such as chromedp.Text, like Do,
// and returns its value.
func Run[T any](t testing.TB, ctx context.Context, action chromedp.Action[T]) T {
	t.Helper()

	v, err := run(ctx, action)
	if err != nil {
		t.Fatalf("browser: %v (page %s)%s", err, location(ctx), formatErrors(Errors(ctx)))
	}
	return v
}

func run[T any](ctx context.Context, action chromedp.Action[T]) (T, error) {
	stepCtx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	v, err := chromedp.Run(stepCtx, action)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w; the test's browser session ran past its %s Timeout", err, Timeout)
	} else if err != nil && stepCtx.Err() != nil {
		err = fmt.Errorf("%w; the action did not finish within StepTimeout (%s)", err, StepTimeout)
	}
	return v, err
}

// WaitText waits until the page's visible text (document.body.innerText)
// contains text, such as the rows a script-rendered page loads. Unlike
// chromedp.Poll it survives a navigation, so it can follow a click on a
// link: it checks every 100ms until the step's deadline.
func WaitText(text string) chromedp.Action[chromedp.Void] {
	literal, _ := json.Marshal(text) // a JSON string is a JavaScript string
	check := chromedp.Evaluate[bool](`document.body !== null && document.body.innerText.includes(` + string(literal) + `)`)
	return func(ctx context.Context, target *chromedp.Target) (chromedp.Void, error) {
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		for {
			found, err := check(ctx, target)
			if err == nil && found {
				return chromedp.Void{}, nil
			}
			// An error is a page being replaced by the next one: its
			// JavaScript context is gone. Check the next page.
			select {
			case <-ctx.Done():
				if err != nil {
					return chromedp.Void{}, fmt.Errorf("waiting for the page to show %q: %w (last check: %v)", text, ctx.Err(), err)
				}
				return chromedp.Void{}, fmt.Errorf("waiting for the page to show %q: %w", text, ctx.Err())
			case <-ticker.C:
			}
		}
	}
}

// location returns the URL of ctx's tab, or a placeholder when the browser
// no longer answers.
func location(ctx context.Context) string {
	locCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	url, err := chromedp.Run(locCtx, chromedp.Location())
	if err != nil {
		return "unknown"
	}
	return url
}

// artifactDir returns where to save a failed test's page: t's ArtifactDir
// when go test runs with -artifacts, else a fresh directory that outlives
// the test (ArtifactDir's default is removed with the test).
func artifactDir(t testing.TB) (string, error) {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return t.ArtifactDir(), nil
	}
	return os.MkdirTemp("", "browser-"+strings.ReplaceAll(t.Name(), "/", "_")+"-")
}
