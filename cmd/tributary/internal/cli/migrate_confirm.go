package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/bench"
	"github.com/tributary-go/tributary/internal/engine"
)

// confirmDown stands between `migrate down` and the data it drops. It says
// which migrations would be rolled back and how many schedules, workflow
// runs and River jobs their tables hold, then returns nil only when the
// person at the terminal types "yes". Without a terminal it refuses and
// points at --yes. With nothing to roll back there is nothing to confirm.
func confirmDown(ctx context.Context, env *Env, pool *pgxpool.Pool, schema string, target int, includeRiver bool) error {
	migrator, err := newMigrator(env, pool, schema)
	if err != nil {
		return err
	}
	status, err := migrator.Status(ctx)
	if err != nil {
		return err
	}
	var rolledBack []string
	dropsVersion := map[int]bool{}
	for _, v := range status.Versions {
		if v.Applied && (v.Version > target || includeRiver) {
			rolledBack = append([]string{fmt.Sprintf("%03d_%s", v.Version, v.Name)}, rolledBack...)
			dropsVersion[v.Version] = true
		}
	}
	dropsRiver := includeRiver && status.RiverVersion > 0
	if len(rolledBack) == 0 && !dropsRiver {
		return nil
	}

	// The tables whose rows an operator would miss, by the migration that
	// creates them.
	q := engine.NewQueries(schema)
	var lost []string
	for _, t := range []struct {
		drop        bool
		table       engine.CountedTable
		one, plural string
	}{
		{dropsVersion[2], engine.TableSchedules, "schedule", "schedules"},
		{dropsVersion[1], engine.TableWorkflowRuns, "workflow run", "workflow runs"},
		{dropsRiver, engine.TableRiverJobs, "River job", "River jobs"},
	} {
		if !t.drop {
			continue
		}
		n, err := q.CountRows(ctx, pool, t.table)
		if err != nil {
			return fmt.Errorf("counting the rows of %s before rolling back: %w", t.table, err)
		}
		what := t.plural
		if n == 1 {
			what = t.one
		}
		lost = append(lost, bench.FormatCount(float64(n))+" "+what)
	}
	what := "roll back " + strings.Join(rolledBack, ", ")
	if dropsRiver {
		what += " and River's migrations"
	}
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
