package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/migrations"
)

// newMigrateStatusCommand is `tributary migrate status`.
func newMigrateStatusCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:     "status",
		Short:   "Show which of Tributary's migrations the database has, and River's version",
		Example: "tributary migrate status --json",
	}, setupMigrateStatus)
}

func setupMigrateStatus(fs *pflag.FlagSet, env *Env) Action {
	dbFlags := addDatabaseFlags(fs, env)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")

	return func(ctx context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		migrator, closePool, err := dbFlags.migrator(ctx)
		if err != nil {
			return err
		}
		defer closePool()

		status, err := migrator.Status(ctx)
		if err != nil {
			return withHint(err, "check the database URL and --schema")
		}
		if *asJSON {
			return printStatusJSON(env.Stdout, status)
		}
		return printStatusTable(env.Stdout, status)
	}
}

// statusJSON is the shape of `migrate status --json`.
type statusJSON struct {
	Migrations []versionStatusJSON `json:"migrations"`
	River      riverStatusJSON     `json:"river"`
}

type riverStatusJSON struct {
	Latest  int `json:"latest"`
	Version int `json:"version"`
}

type versionStatusJSON struct {
	Applied   bool       `json:"applied"`
	AppliedAt *time.Time `json:"applied_at"`
	Name      string     `json:"name"`
	Version   int        `json:"version"`
}

func printStatusJSON(w io.Writer, status *migrations.Status) error {
	out := statusJSON{
		Migrations: make([]versionStatusJSON, len(status.Versions)),
		River:      riverStatusJSON{Latest: status.RiverLatest, Version: status.RiverVersion},
	}
	for i, version := range status.Versions {
		out.Migrations[i] = versionStatusJSON{Applied: version.Applied, Name: version.Name, Version: version.Version}
		if version.Applied {
			appliedAt := version.AppliedAt.UTC()
			out.Migrations[i].AppliedAt = &appliedAt
		}
	}
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(out)
}

func printStatusTable(w io.Writer, status *migrations.Status) error {
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "VERSION\tNAME\tSTATUS\tAPPLIED AT")
	for _, version := range status.Versions {
		state, appliedAt := "pending", "-"
		if version.Applied {
			state, appliedAt = "applied", version.AppliedAt.UTC().Format(time.DateTime+" MST")
		}
		fmt.Fprintf(table, "%03d\t%s\t%s\t%s\n", version.Version, version.Name, state, appliedAt)
	}
	if err := table.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nRiver: version %d of %d\n", status.RiverVersion, status.RiverLatest)
	return err
}
