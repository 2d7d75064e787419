/*
Package tributaryotel reports Tributary's work as OpenTelemetry spans and
metrics. Metric names are under "tributary.", durations are in seconds, and
no metric is labelled by a run id (spans carry run ids; metrics carry the
workflow type, step names, triggers, outcomes and reasons, all bounded by
the code and the configuration).

It is configured like River's own instrumentation, rivercontrib/otelriver,
which applications should install beside it for River's job spans and
metrics (insertions, work durations): Tributary's spans and metrics do not
duplicate them, and its attempt span is the child of River's work span.

	mw := tributaryotel.NewMiddleware(&tributaryotel.MiddlewareConfig{
		TracerProvider: tracerProvider, // nil: otel.GetTracerProvider()
		MeterProvider:  meterProvider,  // nil: otel.GetMeterProvider()
	})
	wf, err := workflow.NewClient(pool, &workflow.Config{
		Middleware: []workflow.Middleware{mw},
		River: &river.Config{
			Middleware: []rivertype.Middleware{otelriver.NewMiddleware(nil)},
			Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
		},
	})
	schedules, err := schedule.New(wf, &schedule.Config{
		TracerProvider: tracerProvider, // slot decisions
		MeterProvider:  meterProvider,  // slots, fire delay, grant denials
	})
	reg, err := tributaryotel.RegisterGauges(wf, &tributaryotel.Config{MeterProvider: meterProvider})

# Spans

	tributary.workflow.start         starting a run (Start, StartTx, StartByName, a child's start); producer.
	                                 Its W3C trace context is stored in the run's metadata under
	                                 TraceMetadataKey, so that every attempt links back to it.
	tributary.workflow.execute       one attempt; the child of River's work span (otelriver) or of
	                                 whatever the worker's context carries, with a link to the start
	                                 span (or to the schedule slot's span). Attributes: workflow type,
	                                 run id, attempt, max attempts, schedule id, parent run id,
	                                 outcome (completed, parked, retry, failed, cancelled, abandoned),
	                                 steps replayed, timer lateness.
	tributary.workflow.step          a step whose function runs (a replay is no span: it is counted on
	                                 the attempt span and by tributary.workflow.step.replays).
	tributary.workflow.sleep         a sleep reached: it parks, or it ends (parked true/false).
	tributary.workflow.signal.wait   a signal wait: it parks, or receives.
	tributary.workflow.signal.send   sending a signal; producer.
	tributary.workflow.child.start   a child run's start, in which the child's tributary.workflow.start is.
	tributary.schedule.slot          one per slot decision (package schedule, Config.TracerProvider):
	                                 schedule id, slot time, workflow type, decision (started, skipped,
	                                 existing), skip reason, DST adjustment and nominal time.

# Metrics

From the middleware (counted where the work happens: the working clients,
and the clients that start runs):

	tributary.runs.started{workflow, trigger}              runs started: trigger api, schedule, child, backfill
	tributary.runs.finished{workflow, outcome}             runs finished: completed, failed, cancelled
	tributary.runs.duration{workflow, outcome}             seconds from a run's start to its finish
	tributary.workflow.step.executions{workflow, step, outcome}  step functions that ran: ok, error
	tributary.workflow.step.duration{workflow, step, outcome}    seconds a step function took
	tributary.workflow.step.replays{workflow, step}        steps (and sleeps, waits) replayed from their memo
	tributary.workflow.timer.lateness{workflow}            seconds from a sleep's wake time to the attempt it woke
	tributary.workflow.attempt.wait{workflow, tenanted}    seconds from an attempt's job being due to its start: a worker, the tenant's turn, its rate or its limit

A slot recorded as skipped starts no run and finishes none: the schedule's
slot metrics count it. See workflow.HookRunsStarted and
workflow.HookRunFinished for exactly when a start and a finish are counted.

From package schedule (schedule.Config.MeterProvider), once a firing batch
commits:

	tributary.schedule.slots{decision, reason}             slots fired: started, or skipped with the reason
	tributary.schedule.fire_delay                          seconds from a slot's time to the pass that fired it
	tributary.schedule.grant.denials{reason}               slots an execution grant refused

From the database, at each collection (RegisterGauges), which any process
can report, a working client or `tributary serve`:

	tributary.runs.active{state}          unfinished runs: pending, running, sleeping, waiting
	tributary.runs.oldest_pending.age     seconds since the oldest pending run was created (0: none)
	tributary.schedules{state}            schedules: active, paused
	tributary.workers.live                working clients whose heartbeat is recent (the worker registry)
	tributary.river.jobs{state}           River jobs: available, running, scheduled, retryable
	tributary.runs.held{workflow, reason} pending runs held back: tenant_limit (workflow.DefineOpts.TenantLimit),
	                                      tenant_rate (ready, waiting for a token of the tenant's rate,
	                                      workflow.DefineOpts.TenantRate: workflow.Tenant.RateLimited);
	                                      a pair reports 0 once its held runs are gone

Each collection of the gauges runs a few index-backed queries (the
unfinished-runs index, the schedules table, River's job state index, the
held runs' index; for tenant_rate, the ready runs of the types with a
rate);
scrape it every 15 to 60 seconds, not every second.

# Cost

With no middleware installed the engine calls nothing for it. With the
middleware installed and no-op providers (an application that has not set
up OpenTelemetry), the 3-step benchmark (BenchmarkMiddleware3Steps) stays
within the machine's noise of the run without it; see the README for the
figures.
*/
package tributaryotel
