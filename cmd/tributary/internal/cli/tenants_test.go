package cli

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// holdRuns starts a working client of workflow type tenant_report, whose
// limit is 1 run of a tenant at once, and three runs of tenant acme: the
// first works (until the test ends) and the two others are held back. It
// returns the working run and the held ones.
func holdRuns(t *testing.T, db *testdb.DB) (*workflow.Client, uuid.UUID, []uuid.UUID) {
	t.Helper()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	working, release := make(chan uuid.UUID, 3), make(chan struct{})
	def := workflow.Define("tenant_report", func(ctx workflow.Context, _ struct{}) (struct{}, error) {
		working <- ctx.Run().ID
		select {
		case <-release:
		case <-ctx.Done():
		}
		return struct{}{}, nil
	}, &workflow.DefineOpts{TenantLimit: 1})
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Schema:    db.Schema,
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}}, TestOnly: true},
		Workflows: []workflow.Registrable{def},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })
	t.Cleanup(func() { close(release) })

	var ids []uuid.UUID
	for range 3 {
		h, err := def.Start(ctx, wf, struct{}{}, &workflow.StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		ids = append(ids, h.ID)
	}
	var running uuid.UUID
	select {
	case running = <-working:
	case <-ctx.Done():
		t.Fatal("no run of tenant acme began")
	}
	// The two others wait, held: their jobs stay ready while acme has 1
	// of 1 running.
	for held := 0; held < 2; {
		runs, err := wf.ListRuns(ctx, &workflow.ListParams{Tenant: "acme", Status: workflow.StatusPending})
		require.NoError(t, err)
		held = 0
		for _, r := range runs {
			if r.Held == workflow.HeldTenantLimit {
				held++
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the runs over the limit were not held back")
		case <-time.After(10 * time.Millisecond):
		}
	}
	var held []uuid.UUID
	for _, id := range ids {
		if id != running {
			held = append(held, id)
		}
	}
	return wf, running, held
}

// TestTenantsCommands: tenants lists a limited tenant's running and held
// runs and its limit; workflow get says why a held run waits and list
// marks it; tenants limit set and clear change the tenant's own limit and
// say what changed.
func TestTenantsCommands(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	_, running, held := holdRuns(t, db)

	res := runCLI(t, vars, "tenants")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `^WORKFLOW +TENANT +RUNNING +READY +HELD +RATE-LIMITED +LIMIT +RATE\ntenant_report +acme +1 +0 +2 +0 +1 \(type\) +-\n$`, res.stdout)

	res = runCLI(t, vars, "tenants", "--type", "tenant_report", "--tenant", "acme", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var listed wire.TenantList
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &listed))
	require.Equal(t, []wire.Tenant{{Type: "tenant_report", Tenant: "acme", Running: 1, Held: 2, Limit: 1, LimitSource: "type"}}, listed.Tenants)

	res = runCLI(t, vars, "tenants", "--tenant", "globex")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "no tenant has runs working or waiting, or a limit or rate of its own\n", res.stdout)

	res = runCLI(t, vars, "workflow", "get", held[0].String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `\nStatus: +pending \(held\)\nHeld: +waiting for a slot: acme has 1 of 1 running \(the workflow type's limit\)\n`, res.stdout)
	res = runCLI(t, vars, "workflow", "get", running.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.NotContains(t, res.stdout, "Held:")

	res = runCLI(t, vars, "workflow", "list", "--tenant", "acme")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `\n`+held[1].String()+` +tenant_report +acme +pending \(held\) `, res.stdout)
	require.Regexp(t, `\n`+held[0].String()+` +tenant_report +acme +pending \(held\) `, res.stdout)
	require.Regexp(t, `\n`+running.String()+` +tenant_report +acme +running `, res.stdout)

	// A limit of the tenant's own of its type and of another type.
	res = runCLI(t, vars, "tenants", "limit", "set", "other_type", "globex", "5")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "tenant globex of other_type: at most 5 runs at once (was no limit of its own); now 0 running, 0 held, limit 5 (tenant)\n", res.stdout)
	res = runCLI(t, vars, "tenants", "limit", "set", "tenant_report", "acme", "1")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "tenant acme of tenant_report: at most 1 run at once (was no limit of its own); now 1 running, 2 held, limit 1 (tenant)\n", res.stdout)
	res = runCLI(t, vars, "workflow", "get", held[0].String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "waiting for a slot: acme has 1 of 1 running (limit set for the tenant)\n")
	res = runCLI(t, vars, "tenants")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `\ntenant_report +acme +1 +0 +2 +0 +1 \(tenant\) +-\nother_type +globex +0 +0 +0 +0 +5 \(tenant\) +-\n$`, res.stdout)

	res = runCLI(t, vars, "tenants", "limit", "clear", "other_type", "globex")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "tenant globex of other_type: removed its own limit of 5; now no limit applies unless the type has a TenantLimit\n", res.stdout)
	res = runCLI(t, vars, "tenants", "limit", "clear", "other_type", "globex")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "tenant globex of other_type had no limit of its own; nothing changed (no limit applies unless the type has a TenantLimit)\n", res.stdout)
	res = runCLI(t, vars, "tenants", "limit", "clear", "tenant_report", "acme")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "tenant acme of tenant_report: removed its own limit of 1; now 1 running, 2 held, limit 1 (type)\n", res.stdout)
}

// TestTenantsCommandFailures: what is wrong is refused in its words before
// anything is written, with what to do.
func TestTenantsCommandFailures(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)
	runFailureCases(t, []string{"tenants"}, []failureCase{
		{name: "bad tenant flag", vars: vars, args: []string{"--tenant", " acme"}, code: ExitUsage,
			stderr: `tributary: --tenant " acme" has a space at an end; trim it`},
		{name: "limit", vars: vars, args: []string{"--limit", "0"}, code: ExitUsage,
			stderr: "tributary: --limit must be from 1 to 1000, not 0; pass --limit 50, or up to --limit 1000 and page with --after"},
		{name: "set without n", vars: vars, args: []string{"limit", "set", "send_report", "acme"}, code: ExitUsage,
			stderr: "tributary: tenants limit set needs <n>; run it as 'tributary tenants limit set <type> <tenant> <n>'; see the tenants with 'tributary tenants'"},
		{name: "set with too many", vars: vars, args: []string{"limit", "set", "send_report", "acme", "5", "6"}, code: ExitUsage,
			stderr: `tributary: unexpected argument "6"; run it as 'tributary tenants limit set <type> <tenant> <n>'`},
		{name: "set not a number", vars: vars, args: []string{"limit", "set", "send_report", "acme", "five"}, code: ExitUsage,
			stderr: `tributary: <n> "five" is not a number of runs; pass 1 or more, such as 'tributary tenants limit set send_report acme 5'`},
		{name: "set zero", vars: vars, args: []string{"limit", "set", "send_report", "acme", "0"}, code: ExitUsage,
			stderr: "tributary: <n> is 0, which would let no run of the tenant work; pass 1 or more; to remove the tenant's own limit run 'tributary tenants limit clear send_report acme'"},
		{name: "set bad tenant", vars: vars, args: []string{"limit", "set", "send_report", "acme ", "5"}, code: ExitUsage,
			stderr: `tributary: <tenant> "acme " has a space at an end; trim it`},
		{name: "set bad type", vars: vars, args: []string{"limit", "set", "send report", "acme", "5"}, code: ExitUsage,
			stderr: `tributary: <type> workflow name "send report" has characters other than letters, digits and _ . : -; use a name such as "send_invoice"`},
		{name: "clear without tenant", vars: vars, args: []string{"limit", "clear", "send_report"}, code: ExitUsage,
			stderr: "tributary: tenants limit clear needs <tenant>; run it as 'tributary tenants limit clear <type> <tenant>'; see the tenants with 'tributary tenants'"},
	})
	res := runCLI(t, vars, "tenants")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "no tenant has runs working or waiting, or a limit or rate of its own\n", res.stdout, "nothing was written")
}

// rateRuns starts a working client of workflow type tenant_rated, rated to
// 1 attempt an hour per tenant, and three runs of tenant acme: the first
// takes acme's one token and completes, the two others wait for the rate.
// It returns the waiting ones.
func rateRuns(t *testing.T, db *testdb.DB) []uuid.UUID {
	t.Helper()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	def := workflow.Define("tenant_rated", func(workflow.Context, struct{}) (struct{}, error) { return struct{}{}, nil },
		&workflow.DefineOpts{TenantRate: workflow.Rate{Limit: 1, Per: time.Hour}})
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Schema:    db.Schema,
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}}, TestOnly: true},
		Workflows: []workflow.Registrable{def},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	var waiting []uuid.UUID
	for i := range 3 {
		h, err := def.Start(ctx, wf, struct{}{}, &workflow.StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		if i == 0 {
			_, err := h.Result(ctx)
			require.NoError(t, err, "the first takes acme's one token")
			continue
		}
		waiting = append(waiting, h.ID)
	}
	for n := 0; n < 2; {
		runs, err := wf.ListRuns(ctx, &workflow.ListParams{Tenant: "acme", Status: workflow.StatusPending})
		require.NoError(t, err)
		n = 0
		for _, r := range runs {
			if r.Held == workflow.HeldTenantRate {
				n++
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the runs beyond acme's token were not reported waiting for its rate")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return waiting
}

// nextToken matches the wait for a token of a rate of 1 an hour, as the
// commands print it.
const nextToken = `(59m\d+(\.\d)?s|1h0m0s)`

// TestTenantsRateCommands: tenants counts a rated tenant's runs waiting for
// its rate apart from its ready ones, with its rate and next token;
// workflow get says why a waiting run waits and list marks it; tenants rate
// set and clear change the tenant's own rate and say what changed.
func TestTenantsRateCommands(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	waiting := rateRuns(t, db)

	res := runCLI(t, vars, "tenants")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `^WORKFLOW +TENANT +RUNNING +READY +HELD +RATE-LIMITED +LIMIT +RATE\n`+
		`tenant_rated +acme +0 +0 +0 +2 \(next in `+nextToken+`\) +- +1 per 1h0m0s \(type\)\n$`, res.stdout)

	res = runCLI(t, vars, "tenants", "--type", "tenant_rated", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var listed wire.TenantList
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &listed))
	require.Len(t, listed.Tenants, 1)
	next, err := time.ParseDuration(listed.Tenants[0].NextToken)
	require.NoError(t, err)
	require.Greater(t, next, 59*time.Minute)
	listed.Tenants[0].NextToken = ""
	require.Equal(t, wire.Tenant{Type: "tenant_rated", Tenant: "acme", RateLimited: 2, Rate: &wire.Rate{Limit: 1, Per: wire.Duration(time.Hour)}, RateSource: "type"}, listed.Tenants[0])
	require.Contains(t, res.stdout, `"rate": {`+"\n"+`        "limit": 1,`+"\n"+`        "per": "1h0m0s"`+"\n      },")

	res = runCLI(t, vars, "workflow", "get", waiting[0].String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `\nStatus: +pending \(rate-limited\)\nHeld: +waiting for its rate: acme is at its rate, 1 per 1h0m0s; next token in `+nextToken+` \(the workflow type's rate\)\n`, res.stdout)
	res = runCLI(t, vars, "workflow", "list", "--tenant", "acme")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `\n`+waiting[0].String()+` +tenant_rated +acme +pending \(rate-limited\) `, res.stdout)
	require.Regexp(t, `\n`+waiting[1].String()+` +tenant_rated +acme +pending \(rate-limited\) `, res.stdout)

	// A rate of the tenant's own of its type and of another type.
	res = runCLI(t, vars, "tenants", "rate", "set", "other_type", "globex", "5", "1s")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "tenant globex of other_type: at most 5 attempts per 1s (was no rate of its own); now 0 ready, 0 rate-limited, rate 5 per 1s (tenant)\n", res.stdout)
	res = runCLI(t, vars, "tenants", "rate", "set", "tenant_rated", "acme", "2", "1h")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `^tenant acme of tenant_rated: at most 2 attempts per 1h0m0s \(was no rate of its own\); now 0 ready, 2 rate-limited, rate 2 per 1h0m0s \(tenant\); next token in \S+\n$`, res.stdout)
	res = runCLI(t, vars, "workflow", "get", waiting[0].String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `waiting for its rate: acme is at its rate, 2 per 1h0m0s; next token in \S+ \(rate set for the tenant\)\n`, res.stdout)
	res = runCLI(t, vars, "tenants")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `\ntenant_rated +acme +0 +0 +0 +2 \(next in \S+\) +- +2 per 1h0m0s \(tenant\)\nother_type +globex +0 +0 +0 +0 +- +5 per 1s \(tenant\)\n$`, res.stdout)

	res = runCLI(t, vars, "tenants", "rate", "clear", "other_type", "globex")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "tenant globex of other_type: removed its own rate of 5 per 1s; now no rate applies unless the type has a TenantRate\n", res.stdout)
	res = runCLI(t, vars, "tenants", "rate", "clear", "other_type", "globex")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "tenant globex of other_type had no rate of its own; nothing changed (no rate applies unless the type has a TenantRate)\n", res.stdout)
	res = runCLI(t, vars, "tenants", "rate", "clear", "tenant_rated", "acme")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `^tenant acme of tenant_rated: removed its own rate of 2 per 1h0m0s; now 0 ready, 2 rate-limited, rate 1 per 1h0m0s \(type\); next token in \S+\n$`, res.stdout)
}

// TestTenantsRateCommandFailures: what is wrong with a tenant's rate is
// refused in its words before anything is written, with what to do.
func TestTenantsRateCommandFailures(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)
	runFailureCases(t, []string{"tenants", "rate"}, []failureCase{
		{name: "set without per", vars: vars, args: []string{"set", "call_partner", "acme", "100"}, code: ExitUsage,
			stderr: "tributary: tenants rate set needs <per>; run it as 'tributary tenants rate set <type> <tenant> <n> <per>'; see the tenants with 'tributary tenants'"},
		{name: "set with too many", vars: vars, args: []string{"set", "call_partner", "acme", "100", "1m", "2"}, code: ExitUsage,
			stderr: `tributary: unexpected argument "2"; run it as 'tributary tenants rate set <type> <tenant> <n> <per>'`},
		{name: "set not a number", vars: vars, args: []string{"set", "call_partner", "acme", "lots", "1m"}, code: ExitUsage,
			stderr: `tributary: <n> "lots" is not a number of attempts; pass 1 or more, such as 'tributary tenants rate set call_partner acme 100 1m'`},
		{name: "set zero", vars: vars, args: []string{"set", "call_partner", "acme", "0", "1m"}, code: ExitUsage,
			stderr: "tributary: <n> is 0, which would let no attempt of the tenant start; pass 1 or more; to remove the tenant's own rate run 'tributary tenants rate clear call_partner acme'"},
		{name: "set bad per", vars: vars, args: []string{"set", "call_partner", "acme", "100", "minute"}, code: ExitUsage,
			stderr: `tributary: <per> "minute" is not a period; pass a Go duration such as 1s, 1m or 1h: 'tributary tenants rate set call_partner acme 100 1m'`},
		{name: "set per under a microsecond", vars: vars, args: []string{"set", "call_partner", "acme", "100", "1ns"}, code: ExitUsage,
			stderr: "tributary: <per> is 1ns; give 1µs or more (a tenant's rate is kept to the microsecond); see 'tributary tenants rate set --help'"},
		{name: "set bad tenant", vars: vars, args: []string{"set", "call_partner", "acme ", "100", "1m"}, code: ExitUsage,
			stderr: `tributary: <tenant> "acme " has a space at an end; trim it`},
		{name: "set bad type", vars: vars, args: []string{"set", "call partner", "acme", "100", "1m"}, code: ExitUsage,
			stderr: `tributary: <type> workflow name "call partner" has characters other than letters, digits and _ . : -; use a name such as "send_invoice"`},
		{name: "clear without tenant", vars: vars, args: []string{"clear", "call_partner"}, code: ExitUsage,
			stderr: "tributary: tenants rate clear needs <tenant>; run it as 'tributary tenants rate clear <type> <tenant>'; see the tenants with 'tributary tenants'"},
	})
	res := runCLI(t, vars, "tenants")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "no tenant has runs working or waiting, or a limit or rate of its own\n", res.stdout, "nothing was written")
}
