// Command quickstart defines a three-step workflow, starts a run of it and
// waits for the result.
//
//	go run ./examples/quickstart
//
// It uses DATABASE_URL, or starts a throw-away Postgres when that is unset.
package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/devdb"
	"github.com/tributary-go/tributary/workflow"
)

// Signup is the workflow's input.
type Signup struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

// Welcome is the workflow's output.
type Welcome struct {
	AccountID int64  `json:"account_id"`
	Message   string `json:"message"`
}

// Onboard creates an account, writes a welcome message and "sends" it. Each
// step runs once per run: if the process dies after "create_account", the
// replay returns the stored account id instead of creating a second account.
var Onboard = workflow.Define("onboard", func(ctx workflow.Context, in Signup) (Welcome, error) {
	accountID, err := workflow.StepTx(ctx, "create_account", func(ctx context.Context, tx pgx.Tx) (int64, error) {
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO quickstart_accounts (email) VALUES ($1) RETURNING id`, in.Email).Scan(&id)
		return id, err
	})
	if err != nil {
		return Welcome{}, err
	}

	message, err := workflow.Step(ctx, "render_welcome", func(context.Context) (string, error) {
		return fmt.Sprintf("Welcome aboard, %s! Your account number is %d.", in.Name, accountID), nil
	})
	if err != nil {
		return Welcome{}, err
	}

	_, err = workflow.Step(ctx, "send_email", func(context.Context) (bool, error) {
		return !strings.Contains(in.Email, "bounce"), nil // stand-in for a mail API call
	})
	return Welcome{AccountID: accountID, Message: message}, err
}, nil)

func main() { devdb.Main("quickstart", run) } // DATABASE_URL, or a throw-away Postgres; Ctrl-C stops it

func run(ctx context.Context, pool *pgxpool.Pool, out io.Writer) error {
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS quickstart_accounts (id bigserial PRIMARY KEY, email text NOT NULL)`); err != nil {
		return err
	}

	client, err := workflow.NewClient(pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}}},
		Workflows: []workflow.Registrable{Onboard},
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer client.Stop(context.WithoutCancel(ctx)) //nolint:errcheck // best effort on the way out

	handle, err := Onboard.Start(ctx, client, Signup{Email: "ada@example.com", Name: "Ada"}, nil)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	welcome, err := handle.Result(waitCtx)
	if err != nil {
		return err
	}

	run, err := client.GetRun(ctx, handle.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "run %s %s: %s\n", run.Type, run.Status, welcome.Message)
	for _, step := range run.Steps {
		fmt.Fprintf(out, "  step %-15s %-9s attempts=%d\n", step.Name, step.Status, step.Attempts)
	}
	return nil
}
