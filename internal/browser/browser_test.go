package browser_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tributary-go/tributary/internal/browser"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFind(t *testing.T) {
	// t.Setenv rules out t.Parallel.

	dir := t.TempDir()
	exe := filepath.Join(dir, "chromium")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	plain := filepath.Join(dir, "not-executable")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))

	t.Run("EnvPath", func(t *testing.T) {
		t.Setenv("CHROMIUM_PATH", exe)
		path, ok := browser.Find()
		require.True(t, ok)
		require.Equal(t, exe, path)
	})

	t.Run("EnvPathMissingMeansNone", func(t *testing.T) {
		for _, env := range []string{filepath.Join(dir, "missing"), plain, dir} {
			t.Setenv("CHROMIUM_PATH", env)
			_, ok := browser.Find()
			require.False(t, ok, env)
		}
	})

	t.Run("PathSearch", func(t *testing.T) {
		t.Setenv("CHROMIUM_PATH", "")
		t.Setenv("PATH", dir)
		path, ok := browser.Find()
		require.True(t, ok)
		require.Equal(t, exe, path)
	})
}

func TestNewSkipsWithoutChromium(t *testing.T) {
	// t.Setenv rules out t.Parallel.

	t.Setenv("CHROMIUM_PATH", filepath.Join(t.TempDir(), "missing"))

	var inner *testing.T
	t.Run("Browser", func(t *testing.T) {
		inner = t
		browser.New(t)
		t.Fatal("New returned without a browser")
	})
	require.True(t, inner.Skipped())
}

func TestNew(t *testing.T) {
	t.Parallel()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<!doctype html><title>ok</title><p id="hello">hello</p>
<script>console.log("fine"); setTimeout(() => document.body.append("rendered later"), 50)</script>`))
	})
	mux.HandleFunc("GET /throws", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<!doctype html><title>throws</title><p id="hello">hello</p>
<script>console.error("bad", 42); throw new Error("boom")</script>`))
	})
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)

	ctx := browser.New(t)

	browser.Do(t, ctx,
		chromedp.Navigate(server.URL+"/ok"),
		chromedp.WaitVisible(chromedp.CSS("#hello")),
		browser.WaitText("rendered later"),
	)
	require.Equal(t, "hello", browser.Run(t, ctx, chromedp.Text(chromedp.CSS("#hello"))))
	browser.NoErrors(t, ctx)

	browser.Do(t, ctx,
		chromedp.Navigate(server.URL+"/throws"),
		chromedp.WaitVisible(chromedp.CSS("#hello")),
	)
	errs := browser.Errors(ctx)
	require.Len(t, errs, 2, "%q", errs)
	require.Equal(t, "console.error: bad 42", errs[0])
	require.Contains(t, errs[1], "exception: Uncaught Error: boom")
}
