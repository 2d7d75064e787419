package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
)

// recorder keeps what the page wrote to its console. chromedp calls record
// on the goroutine that reads the browser's messages, before it delivers
// the reply to the next command, so a message the page wrote before an
// action returned is recorded when the action returns.
type recorder struct {
	mu       sync.Mutex
	errors   []string // exceptions and errors, for Errors
	messages []string // everything, for the failure report
}

type recorderKey struct{}

func (r *recorder) record(ev any) {
	var line string
	isError := false
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		line, isError = "exception: "+describeException(ev.ExceptionDetails), true
	case *runtime.EventConsoleAPICalled:
		args := make([]string, len(ev.Args))
		for i, arg := range ev.Args {
			args[i] = describe(arg)
		}
		line = "console." + string(ev.Type) + ": " + strings.Join(args, " ")
		isError = ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert
	case *log.EventEntryAdded:
		// The browser's own messages: failed requests, CSP violations.
		e := ev.Entry
		line = fmt.Sprintf("%s (%s): %s", e.Level, e.Source, e.Text)
		if e.URL != "" {
			line += " [" + e.URL + "]"
		}
		// The favicon is the browser's request, not the page's, and a
		// missing one is no error of the page.
		isError = e.Level == log.EntryLevelError && !isFavicon(e.URL)
	default:
		return
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = append(r.messages, line)
	if isError {
		r.errors = append(r.errors, line)
	}
}

// isFavicon reports whether rawURL is the /favicon.ico a browser asks every
// site for.
func isFavicon(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Path == "/favicon.ico"
}

func describeException(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "unknown"
	}
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		// The description goes on with the stack, one line a frame.
		first, _, _ := strings.Cut(d.Exception.Description, "\n")
		text += " " + first
	}
	if d.URL != "" {
		text += fmt.Sprintf(" [%s:%d:%d]", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	}
	return text
}

// describe renders a console argument the way DevTools would, roughly.
func describe(o *runtime.RemoteObject) string {
	switch {
	case o == nil:
		return "undefined"
	case len(o.Value) > 0:
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
		return string(bytes.TrimSpace(o.Value))
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case o.Description != "":
		return o.Description
	default:
		return string(o.Type)
	}
}

// Errors returns the page's uncaught exceptions, unhandled promise
// rejections, console.error and console.assert failures, and the browser's
// error-level log entries (such as a request that failed), in order, since
// New returned ctx.
func Errors(ctx context.Context) []string {
	r, _ := ctx.Value(recorderKey{}).(*recorder)
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// NoErrors fails t, listing them, if the pages of ctx have had any Errors.
func NoErrors(t testing.TB, ctx context.Context) {
	t.Helper()

	if errs := Errors(ctx); len(errs) > 0 {
		t.Fatalf("browser: the page reported %d error(s):%s", len(errs), formatErrors(errs))
	}
}

func formatErrors(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return "\n\t" + strings.Join(errs, "\n\t")
}
