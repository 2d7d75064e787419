package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/bench"
	"github.com/tributary-go/tributary/migrations"
)

// rowWords are what the rows of the tables migrate down drops are to an
// operator, one and many.
var rowWords = map[migrations.Table]struct{ one, plural string }{
	migrations.TableSchedules:    {"schedule", "schedules"},
	migrations.TableWorkflowRuns: {"workflow run", "workflow runs"},
	migrations.TableRiverJobs:    {"River job", "River jobs"},
}

// confirmDown stands between `migrate down` and the data it drops. It says
// which migrations would be rolled back and how many schedules, workflow
// runs and River jobs their tables hold (migrations.Migrator.PlanDown),
// then returns nil only when the person at the terminal types "yes".
// Without a terminal it refuses and points at --yes. With nothing to roll
// back there is nothing to confirm.
func confirmDown(ctx context.Context, env *Env, pool *pgxpool.Pool, schema string, target int, includeRiver bool) error {
	migrator, err := newMigrator(env, pool, schema)
	if err != nil {
		return err
	}
	plan, err := migrator.PlanDown(ctx, &migrations.DownOpts{IncludeRiver: includeRiver, TargetVersion: target})
	if err != nil {
		return err
	}
	if len(plan.Versions) == 0 && !plan.River {
		return nil
	}
	rolledBack := make([]string, len(plan.Versions))
	for i, v := range plan.Versions {
		rolledBack[i] = fmt.Sprintf("%03d_%s", v.Version, v.Name)
	}
	var lost []string
	for _, t := range plan.Tables {
		words := rowWords[t.Table]
		noun := words.plural
		if t.Rows == 1 {
			noun = words.one
		}
		lost = append(lost, bench.FormatCount(float64(t.Rows))+" "+noun)
	}
	var parts []string
	if len(rolledBack) > 0 {
		parts = append(parts, strings.Join(rolledBack, ", "))
	}
	if plan.River {
		parts = append(parts, "River's migrations")
	}
	what := "roll back " + strings.Join(parts, " and ")
	if len(lost) > 0 {
		what += ", dropping " + strings.Join(lost, ", ")
	}

	if env.Interactive == nil || !env.Interactive() || env.Stdin == nil {
		return withHint(usageErrorf("migrate down would %s", what),
			"nothing was rolled back: pass --yes to confirm, or run it at a terminal to be asked")
	}
	fmt.Fprintf(env.Stderr, "migrate down will %s.\nType yes to go on: ", what)
	answer, err := bufio.NewReader(env.Stdin).ReadString('\n')
	if err != nil && answer == "" {
		return withHint(errors.New("no confirmation read, so nothing was rolled back"), "type yes, or pass --yes")
	}
	if strings.TrimSpace(answer) != "yes" {
		return withHint(errors.New("not confirmed, so nothing was rolled back"), "type yes, or pass --yes")
	}
	return nil
}
