// Package tributarytest runs a team's workflows and schedules in their own
// tests, on a real Postgres, under a virtual clock.
//
// What is real: Postgres (TEST_DATABASE_URL when set, else a server on
// 127.0.0.1:5432, else a throw-away cluster started from the local
// Postgres binaries, as `make test` does), a schema of its own per Env,
// dropped when the test ends; River; Tributary's engine, workflow client
// and schedule client, working the test's workflow types exactly as in
// production. What is virtual: the clock. It stands still until the test
// moves it: Advance and AdvanceTo move it through every wake-up on the
// way (a Sleep's end, a WaitSignal timeout, a schedule's slot, River's
// retries), one instant at a time, letting each instant's work finish
// before the next; Result moves it by itself to the next wake-up whenever
// nothing is left to do but wait (time skipping), so a run that sleeps
// for 30 days completes in well under a second of wall time.
//
//	func TestMain(m *testing.M) { tributarytest.Main(m) }
//
//	func TestOnboarding(t *testing.T) {
//		env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{Onboarding}})
//		h, err := Onboarding.Start(env.Context(), env.Workflows, "ada@example.com", nil)
//		require.NoError(t, err)
//		out, err := tributarytest.Result(env, h) // 30 days later on the virtual calendar
//		require.NoError(t, err)
//	}
//
// Every time Tributary records (a run's start and end, its steps', a
// slot's) is the virtual clock's.
//
// Time skips only while a test waits in Result, as in Temporal's test
// environment, never in the background: River's maintenance jobs are
// scheduled every few minutes forever, and a clock that skipped to each
// would run away while the test looks at something else. Heartbeats,
// timers and River's job timeouts keep real time (see workflow.Config.Clock).
package tributarytest
