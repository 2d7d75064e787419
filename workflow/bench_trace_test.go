package workflow_test

// Tracing of the benchmarks (TRIBUTARY_BENCH_TRACE=1; see bench_test.go):
// the round trips, transactions and plans of the timed section.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/testdb"
)

// benchTracer counts the round trips a pool makes, by statement.
type benchTracer struct {
	schemaPrefix string

	mu    sync.Mutex
	stats map[string]*benchStmtStats
	rt    int // round trips: statements, batches, copies, prepares
	xact  int // transactions opened: BEGINs plus statements outside one

	walLSN  string
	walSync int64
}

type benchStmtStats struct {
	count int
	total time.Duration
}

type benchTraceKey struct{}

type benchTraceStart struct {
	label string
	at    time.Time
}

func newBenchTracer(schema string) *benchTracer {
	return &benchTracer{schemaPrefix: pgx.Identifier{schema}.Sanitize() + ".", stats: map[string]*benchStmtStats{}}
}

// label names a statement: River's by their sqlc name, the rest by their
// first words.
func (t *benchTracer) label(sql string) string {
	s := strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(s, "-- name: "); ok {
		if i := strings.IndexAny(rest, " \n"); i >= 0 {
			rest = rest[:i]
		}
		return "river " + rest
	}
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, t.schemaPrefix, "")), " ")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

func (t *benchTracer) add(label string, d time.Duration, roundTrip, xact bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.stats[label]
	if st == nil {
		st = &benchStmtStats{}
		t.stats[label] = st
	}
	st.count++
	st.total += d
	if roundTrip {
		t.rt++
	}
	if xact {
		t.xact++
	}
}

func (t *benchTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	label := t.label(data.SQL)
	lower := strings.ToLower(label)
	if conn.PgConn().TxStatus() == 'I' && !strings.HasPrefix(lower, "begin") {
		label = "[autocommit] " + label
	}
	return context.WithValue(ctx, benchTraceKey{}, benchTraceStart{label: label, at: time.Now()})
}

func (t *benchTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	start, ok := ctx.Value(benchTraceKey{}).(benchTraceStart)
	if !ok {
		return
	}
	lower := strings.ToLower(start.label)
	xact := strings.HasPrefix(lower, "begin") || strings.HasPrefix(lower, "[autocommit]")
	t.add(start.label, time.Since(start.at), true, xact)
}

func (t *benchTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	return context.WithValue(ctx, benchTraceKey{}, benchTraceStart{label: fmt.Sprintf("batch of %d", data.Batch.Len()), at: time.Now()})
}

func (t *benchTracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	t.add("  in batch: "+t.label(data.SQL), 0, false, false)
}

func (t *benchTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	if start, ok := ctx.Value(benchTraceKey{}).(benchTraceStart); ok {
		t.add(start.label, time.Since(start.at), true, false)
	}
}

func (t *benchTracer) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	return context.WithValue(ctx, benchTraceKey{}, benchTraceStart{label: "COPY " + data.TableName.Sanitize(), at: time.Now()})
}

func (t *benchTracer) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromEndData) {
	if start, ok := ctx.Value(benchTraceKey{}).(benchTraceStart); ok {
		t.add(start.label, time.Since(start.at), true, false)
	}
}

func (t *benchTracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	return context.WithValue(ctx, benchTraceKey{}, benchTraceStart{label: "PREPARE " + t.label(data.SQL), at: time.Now()})
}

func (t *benchTracer) TracePrepareEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareEndData) {
	if start, ok := ctx.Value(benchTraceKey{}).(benchTraceStart); ok {
		t.add("PREPARE (first use on a connection)", time.Since(start.at), true, false)
	}
}

// walStats reads the server's WAL position and WAL sync count, from a
// connection outside the traced pool.
func benchWALStats(b *testing.B) (lsn string, syncs int64) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testdb.ServerURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text, wal_sync FROM pg_stat_wal`).Scan(&lsn, &syncs); err != nil {
		b.Fatal(err)
	}
	return lsn, syncs
}

// reset starts counting. A nil tracer does nothing.
func (t *benchTracer) reset(b *testing.B, _ *benchEnv) {
	if t == nil {
		return
	}
	b.Helper()
	lsn, syncs := benchWALStats(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats = map[string]*benchStmtStats{}
	t.rt, t.xact = 0, 0
	t.walLSN, t.walSync = lsn, syncs
}

// report reports the counts per item and logs the statements by count.
func (t *benchTracer) report(b *testing.B, env *benchEnv) {
	if t == nil {
		return
	}
	b.Helper()
	t.mu.Lock()
	stats := t.stats
	t.stats = map[string]*benchStmtStats{}
	rt, xact := t.rt, t.xact
	t.mu.Unlock()

	ctx := context.Background()
	plans := t.planCounts(b, env)

	// Backends report WAL syncs to the statistics at most once a second, and
	// at exit: close the pool's connections and let the counter settle.
	env.pool.Close()
	lsn, syncs := benchWALStats(b)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond) // trace mode only: polling a statistics counter
		var again int64
		lsn, again = benchWALStats(b)
		if again == syncs {
			break
		}
		syncs = again
	}
	conn, err := pgx.Connect(ctx, testdb.ServerURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var walBytes int64
	if err := conn.QueryRow(ctx, `SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint`, lsn, t.walLSN).Scan(&walBytes); err != nil {
		b.Fatal(err)
	}

	n := float64(b.N)
	b.ReportMetric(float64(rt)/n, "rt/op")
	b.ReportMetric(float64(xact)/n, "xact/op")
	b.ReportMetric(float64(walBytes)/n, "walB/op")
	b.ReportMetric(float64(syncs-t.walSync)/n, "walsync/op")

	type row struct {
		label string
		*benchStmtStats
	}
	rows := make([]row, 0, len(stats))
	for label, st := range stats {
		rows = append(rows, row{label, st})
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(b.count, a.count), strings.Compare(a.label, b.label))
	})
	var sb strings.Builder
	fmt.Fprintf(&sb, "N=%d: %.2f round trips, %.2f transactions per item\n", b.N, float64(rt)/n, float64(xact)/n)
	fmt.Fprintf(&sb, "%9s %9s %10s  %s\n", "per item", "avg µs", "total ms", "statement")
	for _, r := range rows {
		avg := 0.0
		if r.count > 0 {
			avg = float64(r.total.Microseconds()) / float64(r.count)
		}
		fmt.Fprintf(&sb, "%9.3f %9.0f %10.0f  %s\n", float64(r.count)/n, avg, float64(r.total.Milliseconds()), r.label)
	}
	fmt.Fprintf(&sb, "prepared statements, all connections: %9s %9s  %s\n", "generic", "custom", "statement")
	for _, p := range plans {
		fmt.Fprintf(&sb, "%47d %9d  %s\n", p.generic, p.custom, p.label)
	}
	b.Log(sb.String())
}

type benchPlanCount struct {
	label           string
	generic, custom int64
}

// planCounts sums, over the pool's idle connections, how often each prepared
// statement ran with a generic plan and how often Postgres planned it anew
// (a custom plan), by statement.
func (t *benchTracer) planCounts(b *testing.B, env *benchEnv) []benchPlanCount {
	b.Helper()
	ctx := context.Background()
	byLabel := map[string]*benchPlanCount{}
	for _, conn := range env.pool.AcquireAllIdle(ctx) {
		rows, err := conn.Query(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements`)
		if err == nil {
			for rows.Next() {
				var (
					sql             string
					generic, custom int64
				)
				if err := rows.Scan(&sql, &generic, &custom); err != nil {
					break
				}
				label := t.label(sql)
				pc := byLabel[label]
				if pc == nil {
					pc = &benchPlanCount{label: label}
					byLabel[label] = pc
				}
				pc.generic += generic
				pc.custom += custom
			}
			rows.Close()
		}
		conn.Release()
	}
	counts := make([]benchPlanCount, 0, len(byLabel))
	for _, pc := range byLabel {
		counts = append(counts, *pc)
	}
	slices.SortFunc(counts, func(a, b benchPlanCount) int {
		return cmp.Or(cmp.Compare(b.custom+b.generic, a.custom+a.generic), strings.Compare(a.label, b.label))
	})
	return counts
}
