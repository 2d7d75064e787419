package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/tributary-go/tributary/internal/demo"
	"github.com/tributary-go/tributary/internal/devdb"
)

func init() {
	Register(&Command{
		Name:    "demo",
		Summary: "Run example workflows end to end (on a throw-away Postgres when DATABASE_URL is unset)",
		Example: `tributary demo
			DATABASE_URL=postgres://localhost:5432/scratch tributary demo`,
		Setup: func(fs *flag.FlagSet, env *Env) Action {
			timeout := fs.Duration("timeout", 2*time.Minute, "give up when the demo has not finished after this `duration`")
			return func(ctx context.Context, args []string) error {
				if err := noArgs(args); err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(ctx, *timeout)
				defer cancel()

				db, err := devdb.Open(ctx, env.Stdout)
				if err != nil {
					return withHint(err, "set DATABASE_URL to a Postgres you can write to, or install Postgres (apt-get install -y postgresql)")
				}
				defer db.Close()
				if err := demo.Run(ctx, db.Pool, env.Stdout, env.Logger); err != nil {
					return withHint(fmt.Errorf("demo: %w", err), "run it again with a longer --timeout if the machine is slow")
				}
				fmt.Fprintln(env.Stdout, "\nDemo finished. Next: go run ./examples/quickstart, and read the README.")
				return nil
			}
		},
	})
}
