// Package engine is Tributary's one door into its tables and River's
// internals. It alone holds Tributary's SQL: Queries, one typed method per
// statement (run and slot starts, attempts, memos, parking, signals,
// completion batching, listings, the registry, the waker's channel, the
// repair, reconcile and retention queries), each statement written once
// (sql.go says how). It is the only package that imports River's driver
// interface (riverdriver) or its pilot (riverpilot), and the only one
// whose SQL writes or locks River's job table (Jobs). Packages workflow and
// schedule are the public façades over it: they decide, log and word the
// errors, and use River's public API (river.Client, InsertTx,
// JobRetryTx, …) for the rest. TestOnlyTheEngineHasSQL and
// TestOnlyTheEngineTouchesRiverInternals hold that boundary. The one
// thing schedule needs of a workflow client beyond SQL (its River client,
// types, limits, middleware and waker, to start a slot's run) it reaches
// through Workflows, which package workflow implements unexported.
//
// What it relies on from River, each pinned by a test of conformance_test.go
// so that a River upgrade that changes it fails there, loudly, rather than
// in the product, quietly:
//
//   - River's completer records an attempt's outcome through the driver's
//     pilot (JobSetStateIfRunningMany), so a Driver's Completer sees every
//     job River completes, inside River's own write.
//   - JobSetStateIfRunningMany only moves jobs that are running, and
//     returns a job it left alone with its current state.
//   - JobRescueMany sets the state, error and finalized_at it is given, as
//     River's rescuer does.
//   - LeaderResign ends a leader's term at once, so that another client is
//     elected without waiting for the term to expire.
//   - A notification on the river_insert topic with payload {"queue": q}
//     makes q's idle producers fetch at once.
//   - River appends the fetching client's id to attempted_by on every fetch
//     (snoozes included), the current attempt's last.
//   - River's job table has the columns and states this package's SQL,
//     and Tributary's triggers (migration 006), name.
//
// The package is internal: it has no compatibility promise of its own, and
// its types never appear in Tributary's exported API.
package engine
