package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// clockPackages are the library's packages, relative to the module root:
// the code that runs in a user's process under workflow.Config.Clock. The
// CLI, the demo, the benchmarks and the examples are programs of their own,
// with no injected clock.
var clockPackages = []string{"internal/engine", "internal/wfruntime", "workflow", "schedule", "jobs", "riverui", "tributaryotel", "migrations"}

// sqlClock matches a read of the database's clock in SQL. The one form
// that follows the clock, a statement's now parameter
// (coalesce($n::timestamptz, now()), or $now in a fragment its caller
// numbers), is removed before matching (clockParam).
var (
	sqlClock   = regexp.MustCompile(`(?i)\bnow\(\)|\bclock_timestamp\(\)|\bcurrent_timestamp\b|\bstatement_timestamp\(\)|\btransaction_timestamp\(\)|\blocaltimestamp\b`)
	clockParam = regexp.MustCompile(`\$(\d+|now)::timestamptz, now\(\)`)
)

// realTime is a place that reads real time on purpose, and why: a finding
// in file (relative to the module root, slash-separated) whose line
// contains line is allowed.
type realTime struct {
	file, line, reason string
}

// realTimes are the places allowed to read the database's or the
// machine's clock instead of workflow.Config.Clock. Each says why; an
// entry that no longer matches anything fails the test, so the list stays
// true.
var realTimes = []realTime{
	// The worker registry: liveness is real time, so that a clock that
	// jumps never makes live clients look dead (nor dead ones live).
	{"internal/engine/registry.go", "heartbeat_at > now() - make_interval", "a worker is live by a heartbeat within real seconds"},
	{"internal/engine/registry.go", "SET heartbeat_at = now()", "a heartbeat is stamped with the database's real time"},
	{"internal/engine/registry.go", "heartbeat_at = now()", "registering stamps the first heartbeat with the database's real time"},
	{"internal/engine/registry.go", "RETURNING clock_timestamp(), pg_postmaster_start_time()", "a heartbeat measures this machine's offset from the database's clock (dbClock)"},
	{"internal/engine/registry.go", "SELECT clock_timestamp()", "Start measures this machine's offset from the database's clock (dbClock)"},
	{"internal/engine/registry.go", "END) < now() - make_interval(secs => $2)", "a client is dead by heartbeats missed for real seconds"},
	{"internal/engine/registry.go", "w.heartbeat_at < now() - make_interval(secs => $3)", "a client is dead by heartbeats missed for real seconds"},
	{"internal/engine/tenant.go", "w.heartbeat_at > now() - make_interval(secs => $1)", "a type's limit counts its live workers' registrations (heartbeats)"},
	{"internal/engine/fair_rates.go", "w.heartbeat_at > now() - make_interval(secs => $1)", "a type's rate counts its live workers' registrations (heartbeats)"},
	// Tenants' rates: tokens refill by real elapsed time, since a rate
	// paces real work; a clock that jumps must not refill a bucket.
	{"internal/engine/fair_rates.go", "least(burst, 1), now(), per_second", "a new rate bucket is stamped with real time"},
	{"internal/engine/fair_rates.go", "extract(epoch FROM now() - b.at) * excluded.per_second", "a rate bucket refills by real elapsed time"},
	{"internal/engine/fair_rates.go", "at = now(), per_second", "a rate bucket is stamped with real time"},
	{"internal/engine/fair_rates.go", "extract(epoch FROM now() - b.at) * coalesce(o.per_second", "a rate bucket's tokens as the fetch would find them, by real elapsed time"},
	{"internal/engine/fair_fetch.go", "time.Now()", "how often a quiet queue probes for tenants is real time"},
	{"internal/engine/fair_reserve.go", "now := time.Now()", "how often a producer fetches, which decides its reserve, is real time"},
	{"internal/engine/jobs.go", "func (realTime) Now() time.Time { return time.Now() }", "Jobs without a clock (NewJobs) keep real time, as River's own TimeGenerator does in production"},
	// Metrics describe the live system as an exporter reads it.
	{"internal/engine/gauges.go", "extract(epoch FROM now() - (", "a gauge's age of the oldest pending run, read by the database's clock"},
	{"tributaryotel/gauges.go", "time.Now()", "a gauge's counts since now, by the exporter's clock"},
	{"tributaryotel/middleware.go", "time.Now()", "an attempt's duration histogram measures real time"},
	// The clock itself, and what runs by real time beside it.
	{"workflow/client.go", "realNow := config.Clock, time.Now", "under an injected clock, the registry's orphan timing (realNow) keeps real time"},
	{"workflow/client.go", "dbc.local = time.Now", "the database's clock is this machine's, corrected by its offset"},
	{"internal/wfruntime/batch.go", "time.Now()", "a write batch's deadline is real time"},
	{"internal/wfruntime/waker.go", "time.Now()", "a timed wake-up's retries for an uncommitted job are real time"},
	{"workflow/retention.go", "time.Now()", "run ids (UUIDv7) carry real time"},
	{"workflow/control.go", "now := time.Now()", "a listing's ceiling reaches past run ids (UUIDv7), which carry real time"},
	{"internal/engine/repair.go", "AND r.id < ` + idFloorSQL(`greatest(now(),", "the repair's ceiling reaches past run ids (UUIDv7), which carry real time"},
	{"internal/wfruntime/retention.go", "time.Now()", "a retention pass's time limit and pause are real time"},
	{"internal/wfruntime/foreign.go", "time.Now()", "the foreign-fetch warning is rate-limited in real time"},
	{"workflow/retry.go", "if local := time.Now(); at.Before(local)", "River compares a retry's time with its own clock, this machine's, and falls back to its backoff for a time before it"},
	{"schedule/fire.go", "*since, *delay = time.Now()", "a pass's wait for locked schedules backs off in real time"},
	{"riverui/auth.go", "now: time.Now", "a session cookie expires in the browser's real time"},
	{"riverui/render.go", "time.Now()", "the dashboard's page time, by the server's clock"},
	{"riverui/api_grants.go", "b.params(time.Now())", "a grant's expires_in counts from the server's clock, the one its pages show times by"},
	{"riverui/dashboard_grants.go", "grantParamsOf(r, time.Now())", "a grant's expires_in counts from the server's clock, the one its pages show times by"},
	{"migrations/migrator.go", "DEFAULT now()", "a migration's applied_at is when it really ran"},
	{"migrations/migrator.go", "time.Now()", "a migration's duration is real time"},
}

// TestOneClock enforces ARCHITECTURE.md's "Time": every time Tributary
// decides or records comes from workflow.Config.Clock, in Go through the
// client's clock and in SQL through a statement's now parameter,
// coalesce($n::timestamptz, now()), which is NULL, and so the database's
// now(), when no clock is configured. It fails on a string literal that
// reads the database's clock otherwise (now(), clock_timestamp(),
// current_timestamp, …) and on a reference to time.Now in the library's
// non-test code, unless realTimes lists the place with its reason.
func TestOneClock(t *testing.T) {
	t.Parallel()

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	used := make([]bool, len(realTimes))
	var checked int
	for _, pkg := range clockPackages {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		require.NoError(t, err)
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			lines := strings.Split(string(src), "\n")
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
			require.NoError(t, err)
			checked++

			check := func(pos token.Pos, what string) {
				p := fset.Position(pos)
				line := lines[p.Line-1]
				for i, rt := range realTimes {
					if rt.file == rel && strings.Contains(line, rt.line) {
						used[i] = true
						return
					}
				}
				t.Errorf("%s:%d: %s bypasses workflow.Config.Clock (%q): take the statement's now parameter, coalesce($n::timestamptz, now()), or the client's clock; or, for real time, list it in realTimes with its reason",
					rel, p.Line, what, strings.TrimSpace(line))
			}
			ast.Inspect(file, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if n.Kind != token.STRING {
						return true
					}
					s, err := strconv.Unquote(n.Value)
					if err != nil {
						return true
					}
					s = clockParam.ReplaceAllString(s, "")
					// A literal spans lines: report each read on its own.
					start := fset.Position(n.Pos()).Line
					for i, text := range strings.Split(s, "\n") {
						if m := sqlClock.FindString(text); m != "" {
							check(fset.File(n.Pos()).LineStart(start+i), m)
						}
					}
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && n.Sel.Name == "Now" {
						check(n.Pos(), "time.Now")
					}
				}
				return true
			})
		}
	}
	require.Greater(t, checked, 100, "the scan found too few Go files; is the module root %s?", root)
	for i, rt := range realTimes {
		if !used[i] {
			t.Errorf("realTimes lists %s %q (%s), which no longer reads real time: remove the entry", rt.file, rt.line, rt.reason)
		}
	}
}
