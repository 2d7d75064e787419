// Package wfruntime is a workflow client's runtime: the machinery that
// package workflow runs on, and the one door through which Tributary's own
// packages reach a client. None of it is Tributary's API; a user holds a
// *workflow.Client and calls its exported methods.
//
// The machinery, kept out of the package users read: the write batches
// (Batcher), what the attempts' starts and the steps' memos read and write
// in them (StepBatches), the completion of runs with their River jobs, by the engine's
// batch or by River's completer through River's pilot, and the runs
// pending completion (Completer, Pending), the LISTEN connections of the waker and of Result waits
// (Listener), the Result waits themselves (Waiter), the notice of plain
// River clients that fail workflow jobs (ForeignFetches), the batched
// deletes of the retention (DeleteExpiredRuns), the exact timers that
// wake jobs, with the listener of the wake-ups and repairs other clients
// announce (Waker), the repair of runs whose River job ended outside
// Tributary (Repairer), and the worker registry's heartbeat, with the
// rescue of dead clients' jobs and of a client's own jobs whose outcome a
// new server lost (Registry, HeldJobs).
//
// The door serves package schedule, the dashboard and API (riverui), the
// OpenTelemetry gauges (tributaryotel), the test kit (tributarytest) and
// the CLI. It is Of:
//
//	rt := wfruntime.Of(wf) // wf is a *workflow.Client
//	err := pgx.BeginFunc(ctx, rt.Pool(), …)
//
// It is typed, and set by nothing global: workflow.Client embeds a Door,
// which NewClient fills with the client's Runtime, and Of takes any value
// whose method set has the Door's unexported method, which only a type
// embedding a Door has. The Door is embedded through an unexported alias,
// so the field and its method are unexported in package workflow: go doc
// shows neither, and no program outside this module can name the door or
// call what is behind it. (The alternatives were an exported
// Client.Runtime() returning an internal type, which go doc prints and any
// user can call, and a function variable that package workflow sets in an
// init(), which a reader cannot follow and which fails at run time, not at
// compile time, when unset.)
package wfruntime

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/engine"
)

// Runtime is a workflow client as Tributary's other packages use it: its
// pool and schema, what starting a schedule slot's run needs beyond SQL
// (the client's River client, its registered types and limits, its
// middleware, its waker), and the test kit's hooks. Package workflow
// implements it, unexported.
type Runtime interface {
	// Pool is the pool the client was built with.
	Pool() *pgxpool.Pool

	// Queries are the client's statements, their schema
	// (workflow.Config.Schema) filled in: a façade reads with them rather
	// than building statements of its own.
	Queries() *engine.Queries

	// Bind adds b to the client's River client. It fails once the
	// client has started.
	Bind(b *Binding) error

	// Now is the client's time (workflow.Config.Clock).
	Now() time.Time

	// SQLNow is the now parameter of the engine's statements: nil, for
	// the database's now(), unless workflow.Config.Clock is set; then
	// the clock's time.
	SQLNow() *time.Time

	// StartScheduledTx starts the run of one schedule slot in tx, for an
	// operator's explicit start: a run the engine refuses is an error, and
	// nothing is written.
	StartScheduledTx(ctx context.Context, tx pgx.Tx, s *ScheduledStart) (*Started, error)

	// StartScheduledManyTx starts (or records as skipped) the runs of
	// schedule slots in tx, one result per start, in order.
	StartScheduledManyTx(ctx context.Context, tx pgx.Tx, starts []*ScheduledStart) ([]Started, error)

	// WakeAtTx makes a scheduled River job available at w.At, timed by
	// the working clients once tx commits.
	WakeAtTx(ctx context.Context, tx pgx.Tx, w *Wake) error

	// CancelScheduleRunsTx cancels the unfinished runs of a schedule and
	// returns how many.
	CancelScheduleRunsTx(ctx context.Context, tx pgx.Tx, s *ScheduleRuns) (int, error)

	// InputChecker reads the live workers' input limits on db and returns
	// a check of an encoded input for a run of a workflow type that this
	// client or another process will start later (a schedule's slots), so
	// that what would fail at every fire fails now, with a
	// *workflow.ValidationError (Field "input"):
	//
	//   - its size is checked against the smallest input limit of this
	//     client and of the live workers that serve the type (each
	//     records its workflow.Config.MaxInputBytes in the worker
	//     registry), so an insert-only client such as the CLI knows the
	//     limit of the workers;
	//   - when the type is registered on this client, the input must
	//     decode into the type's input.
	//
	// A call that holds a transaction passes it as db: N such calls at
	// once on a pool of N would otherwise wait for each other forever.
	InputChecker(ctx context.Context, db engine.DBTX) (func(typ string, input []byte) error, error)

	// TypeServed is workflow.Client.TypeServed reading the worker
	// registry on db.
	TypeServed(ctx context.Context, db engine.DBTX, typ string) (bool, error)

	// TypesServed is TypeServed for many types in one query: the result
	// maps each of types to whether a live client serves it.
	TypesServed(ctx context.Context, types []string) (map[string]bool, error)

	// ValidateTypeName checks that name can name a workflow type, with
	// the *workflow.ValidationError that workflow.Define would give.
	ValidateTypeName(name string) error

	// MockStep puts fn, a func(context.Context) (T, error) for the step's
	// T, in place of the function of step of workflow type typ, for the
	// runs this client works (package tributarytest); a nil fn removes it.
	MockStep(typ, step string, fn any)

	// ReplayHistory replays run, a *workflow.Run with its steps, against
	// the client's code for its type, touching no database (package
	// tributarytest's Replay): nil when the code fits the history, the
	// *workflow.DivergenceError a deploy would hit when it does not.
	ReplayHistory(ctx context.Context, run any) error

	// BindingPool is the pool of the binding named name (Binding.Conns)
	// while the client is started, else the client's pool.
	BindingPool(name string) *pgxpool.Pool

	// Until is how long until the database's clock reaches at, as this
	// process reads it (0 or less: it has); 0 under an injected
	// workflow.Config.Clock, where the test's clock decides.
	Until(at time.Time) time.Duration
}

// Door holds a workflow client's Runtime. workflow.Client embeds one,
// through an unexported alias, and NewClient fills it (see the package
// docs).
type Door struct {
	rt Runtime
}

// NewDoor is a Door to rt.
func NewDoor(rt Runtime) Door { return Door{rt: rt} }

func (d *Door) runtime() Runtime { return d.rt }

// Client is a type that embeds a Door: a *workflow.Client.
type Client interface {
	runtime() Runtime
}

// Of returns the Runtime of wf, a *workflow.Client.
func Of(wf Client) Runtime { return wf.runtime() }

// NoWorkerWarning is the warning the CLI, the API and the dashboard show
// when a run or schedule of typ was accepted but no live client serves it.
func NoWorkerWarning(typ string) string {
	return fmt.Sprintf("no live worker serves workflow type %q: its runs stay pending until a client that registers it starts "+
		"(check the spelling; `tributary workers` lists what each client serves)", typ)
}
