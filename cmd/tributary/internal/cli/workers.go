package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/workflow"
)

func newWorkersCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "workers",
		Short: "List the working clients of the database: which workflow types and queues each serves, and whether it is alive",
		Long: `Every started working client (tributary serve, or an application's
workflow.Client with River queues) records itself in the worker registry and
refreshes its heartbeat every second. A client that stops cleanly removes
itself; a client that died keeps its row, not live, until a live client
rescues its running jobs (within seconds). A workflow type that no live
client serves has its runs wait: 'schedule create' and 'workflow start' warn
about it.`,
		Example: `tributary workers
			tributary workers --json`,
	}, setupWorkers)
}

func setupWorkers(fs *pflag.FlagSet, env *Env) Action {
	parse := func(args []string) (struct{}, error) {
		if err := noArgs(args); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, nil
	}
	return dbCommand(fs, env, dbSpec{json: "print the registry as JSON"}, parse, func(ctx context.Context, c *commandRun, _ struct{}) error {
		workers, err := c.wf.Workers(ctx)
		if err != nil {
			return workflowError(err, uuid.Nil)
		}
		if c.asJSON {
			return printJSON(env.Stdout, workersJSON(workers))
		}
		return printWorkers(env.Stdout, workers, time.Now())
	})
}

// workerJSON is a worker in `workers --json`.
type workerJSON struct {
	ClientID      string    `json:"client_id"`
	Hostname      string    `json:"hostname"`
	PID           int       `json:"pid"`
	WorkflowTypes []string  `json:"workflow_types"`
	Queues        []string  `json:"queues"`
	StartedAt     time.Time `json:"started_at"`
	HeartbeatAt   time.Time `json:"heartbeat_at"`
	Live          bool      `json:"live"`
}

func workersJSON(workers []*workflow.Worker) []workerJSON {
	out := make([]workerJSON, len(workers))
	for i, w := range workers {
		out[i] = workerJSON(*w)
	}
	return out
}

func printWorkers(w io.Writer, workers []*workflow.Worker, now time.Time) error {
	if len(workers) == 0 {
		_, err := fmt.Fprintln(w, "No working client is registered: no run or schedule slot is worked until one starts (tributary serve, or a service with a workflow.Client and River queues).")
		return err
	}
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "CLIENT\tHOST\tPID\tLIVE\tHEARTBEAT\tSTARTED\tQUEUES\tWORKFLOW TYPES")
	for _, wk := range workers {
		fmt.Fprintf(table, "%s\t%s\t%d\t%s\t%s ago\t%s\t%s\t%s\n", wk.ClientID, wk.Hostname, wk.PID, yesNo(wk.Live),
			now.Sub(wk.HeartbeatAt).Round(100*time.Millisecond), wk.StartedAt.UTC().Format(time.RFC3339),
			strings.Join(wk.Queues, ","), orDash(strings.Join(wk.WorkflowTypes, ",")))
	}
	return table.Flush()
}
