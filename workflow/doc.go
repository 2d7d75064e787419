/*
Package workflow runs durable workflows on River: Go functions whose steps
are memoized in Postgres, so that an attempt that fails, crashes or parks is
replayed and skips every step that already finished.

# A workflow in 30 seconds

Define a workflow type from a function with typed input and output. Every
side effect goes in a step:

	type Order struct{ ID int64 }
	type Receipt struct{ ChargeID string }

	var ProcessOrder = workflow.Define("process_order",
		func(ctx workflow.Context, order Order) (Receipt, error) {
			charge, err := workflow.Step(ctx, "charge", func(ctx context.Context) (string, error) {
				return payments.Charge(ctx, order.ID) // runs once per run, even across crashes
			})
			if err != nil {
				return Receipt{}, err
			}
			if err := workflow.Sleep(ctx, "cool-off", time.Hour); err != nil {
				return Receipt{}, err // durable: holds no worker while it sleeps
			}
			_, err = workflow.StepTx(ctx, "record", func(ctx context.Context, tx pgx.Tx) (struct{}, error) {
				_, err := tx.Exec(ctx, "UPDATE orders SET charged = true WHERE id = $1", order.ID)
				return struct{}{}, err // exactly once: the write and the memo commit together
			})
			return Receipt{ChargeID: charge}, err
		}, nil)

Build a Client with the types it runs; it builds the River client (one River
worker per workflow type, job kind "workflow:<name>") with Tributary's
recommended settings:

	client, err := workflow.NewClient(dbPool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}}},
		Workflows: []workflow.Registrable{ProcessOrder},
	})
	if err := client.Start(ctx); err != nil { ... }
	handle, err := ProcessOrder.Start(ctx, client, Order{ID: 42}, nil)
	receipt, err := handle.Result(ctx)

Many runs at once go in one transaction with StartMany (their River jobs
in one insert, as River's InsertMany); concurrent Starts from many callers
share their transactions on their own (group commit), each returning once
its run is committed.

# Guarantees

  - Every attempt of a run is one River job (ONE_JOB_PER_ATTEMPT): River's
    fetching, retries with backoff, rescue of stuck jobs and notifications
    do the scheduling; Tributary never claims work itself.
  - A step's result is durable before the workflow moves past it: before
    the next step, sleep, wait or child does anything, and at the latest in
    the run's completion transaction. A replay returns it without calling
    the step's function (MEMO_BEFORE_PROGRESS). All of a run's memos load in
    one query per attempt.
  - StepTx commits a step's writes and its memo in one transaction.
  - Starting a run (StartTx), parking it (Sleep, WaitSignal, RunChild) and
    finishing it (the run's row and its job completed by one statement)
    each change the run's row and its River job in one transaction
    (TRANSACTIONAL_EDGES).
  - Sleeping and waiting runs hold no worker slot and use up no attempt; a
    signal or a finished child wakes its run at once through River.
  - Replaying an old run with code whose steps do not fit its history fails
    the run with a *DivergenceError instead of returning a wrong value or
    running a side effect again (see "Changing a workflow with runs in
    flight" below).
  - Bad input (unknown type, unencodable or oversized input, bad names and
    options) is a typed error and writes nothing.

What is not guaranteed: a plain Step's function may run more than once if the
process dies after its side effect and before its memo commits (make it
idempotent, or use StepTx); and code outside steps runs on every replay.

Step returns before its memo commits. The memo is stored when the workflow
reaches its next step boundary, which waits for it, or with the run's
completion, in the same statement; if the workflow reaches neither within
50 ms, it is stored on its own. A run's last step thus costs no commit wait
of its own. Since code between steps runs again on every replay, it cannot
tell the difference; a crash in that window runs the step again, as a crash
before its memo committed always did.

# Changing a workflow with runs in flight

A run's history is the ordered list of its step boundaries: steps, sleeps,
signal waits, child runs and version records, each recorded with its
position. A replay walks it in order. Every boundary the code reaches must
be the next recorded one, by name, kind and result type; otherwise the run
fails at once with a *DivergenceError that names the step the history has
there and the step the code asked for. So, for a run in flight:

  - renaming a step, inserting a step before recorded ones, reordering
    steps, or turning a step into a sleep is a divergence;
  - adding steps after the last recorded one is fine: they run as new steps;
  - a failed step does not bind: the next attempt may run another step in
    its place (a fix deployed in between);
  - records from before migration 007 have no position and are matched by
    name alone, as they were when written.

Step boundaries are reached one at a time, from the workflow function: a
boundary reached while another is in progress (a step called from inside a
step's function, or from another goroutine) fails the run, since such steps
have no order a replay could match. Do parallel work inside one step.

To change a workflow whose runs are in flight, guard the change with
Version, which old runs answer with DefaultVersion and new runs with the
new version, recorded so that every replay takes the same branch:

	v, err := workflow.Version(ctx, "sms-instead-of-email", workflow.DefaultVersion, 1)
	if err != nil {
		return "", err
	}
	if v == workflow.DefaultVersion {
		_, err = workflow.Step(ctx, "email", sendEmail) // runs already past this point
	} else {
		_, err = workflow.Step(ctx, "sms", sendSMS)
	}

Once no run in flight took the old branch, raise minSupported to 1 and
delete it. A run that diverged keeps its history as it was: once code that
guards the change is deployed, Client.Retry resumes it; otherwise cancel it
and start a new one. See Example_version.

# Performance

A run costs, beyond its River job, about one batched write per step and one
statement that completes it with its job; a worker's slot takes its next job
as soon as the workflow function returns, and Result returns once the
completion has committed (within about 10 ms under load). How the batches,
the completion writers and the tables are built for it is in the
repository's ARCHITECTURE.md ("The workflow engine's costs"). The figures,
as ratios against raw River in the same benchmark run, are in the README;
run `go test -run '^$' -bench . ./workflow/`.

# Configuration

Tributary applies DefaultFetchCooldown (2 ms) and DefaultFetchPollInterval
(1 s) to the River client unless Config.River sets them: River's default
100 ms fetch cooldown caps a queue of 20 workers near 200 jobs per second.

# Middleware and observability

Config.Middleware takes middleware in River's style (see Middleware):
wrappers around starting a run, each attempt, each step that does work and
each signal sent, and hooks for the runs started, each run finished (once,
after its commit) and each step replayed. Package tributaryotel is the
OpenTelemetry one: spans for starts, attempts and steps, and run and step
metrics. With none installed, the engine calls nothing for them.
*/
package workflow
