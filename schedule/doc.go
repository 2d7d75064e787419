// Package schedule provides Tributary's cron schedules: workflow runs started
// on a cron expression in an IANA time zone, exactly once per slot, with
// daylight saving time handled the way people expect.
//
// A schedule is a row in Postgres: a cron expression, a time zone, the
// workflow type and input to start, start and end times, an overlap policy
// and a catch-up window. Build a Client with New on a workflow client,
// before starting that client, and manage schedules with Create (and
// CreateTx, CreateMany), Get, List, Pause, Resume, Delete and Next:
//
//	wf, err := workflow.NewClient(pool, &workflow.Config{
//		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}}},
//		Workflows: []workflow.Registrable{Digest},
//	})
//	schedules, err := schedule.New(wf, nil) // fires slots on wf, and repairs broken chains
//	err = wf.Start(ctx)
//	s, err := schedules.Create(ctx, &schedule.Params{
//		Name: "morning digest", Owner: "user-42", Workflow: "digest",
//		Cron: "0 8 * * *", TimeZone: "Europe/Paris",
//	})
//
// Each run a schedule starts carries a tenant (workflow.Run.Tenant), by
// default the schedule's Owner, so that per-user schedules start per-user
// runs with no setting; Params.Tenant names another, and
// Schedule.RunTenant says which applies.
//
// # Keys and declared schedules
//
// A service that creates its schedules at start-up must not make a copy at
// every restart, deploy or replica. Give each a Key, unique per Owner:
// Create with a key the owner has already makes nothing and returns that
// schedule (Schedule.Existing), or a *KeyConflictError naming the fields
// that differ when the spec changed. Racing creates of one key, from any
// number of processes, make one schedule. Every call that acts on one
// schedule takes a Ref: ByID(id), or ByKey(owner, key).
//
//	s, err := schedules.Create(ctx, &schedule.Params{
//		Owner: "user-42", Key: "digest", Name: "morning digest", Workflow: "digest",
//		Cron: "0 8 * * *", TimeZone: "Europe/Paris",
//	}) // the same schedule at every start-up
//	_, err = schedules.Pause(ctx, schedule.ByKey("user-42", "digest"), "on holiday")
//
// Declare goes further for the schedules that belong to the service
// itself: it makes a Declaration (the service's name, a version, its
// schedules) true in the database in one transaction, creating what is
// missing, updating what the code changed and pausing (or deleting) what
// the service no longer declares. Replicas take turns, an older version
// never undoes a newer one during a rolling deploy, and schedules made by
// Create (by hand, or by application code) are never touched.
//
// # How slots fire
//
// Slots fire set-based. There is one River job (kind tributary:schedule_fire,
// queue Queue) per instant that some schedule's next slot falls on, not one
// per slot: ten thousand schedules due at 08:00 share one. At its instant it
// runs a firing pass: it claims the schedules due by then (FOR UPDATE SKIP
// LOCKED, oldest slot first) in batches of up to 1,000 (100 for the first,
// so that the first runs start sooner), and fires each batch in one
// transaction that starts the slots' runs, or records them as skipped
// ("overlap" when the previous run is unfinished under OverlapSkip, "missed"
// when the slot is found later than the catch-up window, a grant's reason,
// "cannot start" when the engine refuses the run), advances next_fire_at and
// inserts the fire jobs of the next instants (PRODUCER_ENQUEUES_NEXT). Each
// slot's run is unique on (schedule, slot), forever, and its River job is a
// unique job on the same pair, so passes racing on several clients fire a
// slot at most once. A batch that fails is fired again one schedule per
// transaction; a schedule that cannot be fired even alone has its slot
// recorded as skipped ("cannot fire: …") and its chain goes on. Nothing polls
// the schedules table. Firing takes at most QueueWorkers connections of a
// working client's pool, whatever the number of slots.
//
// The client that inserts an instant's job also times it, so a slot fires
// within milliseconds of its time; a client that works no jobs (the CLI
// creating a schedule) hands the timing to the clients that do, when its
// transaction commits, and a working client arms the timers of the jobs due
// within ten minutes when it starts. With no working client running,
// River's scheduler fires the slot within about five seconds of its time
// once one starts. Downtime never mass-fires: a missed slot moves the chain
// to the next future slot. Resume skips the slots missed while paused.
//
// Overlap policies: allow, skip (the default), queue (at most one run waits
// for the previous to finish) and replace (cancel the unfinished run).
// Catch-up policies: window (the default) and latest (run only the most
// recent missed slot). Resume chooses what happens to the slots missed while
// paused (skip, latest, backfill). Update, Trigger, Backfill and History
// complete the API; every write has a Tx twin; CreateMany creates thousands
// of schedules in one transaction. A chain whose pending job is lost
// (deleted in River UI, say, or left running by a client that died) is
// repaired by Reconcile, which a working client's leader runs on start-up and
// every minute: it fires the overdue slots itself.
//
// Simulate is the test kit: it drives a schedule through a simulated clock
// (a year of slots, DST days, downtime and pauses included) in
// milliseconds, with the engine's own evaluation and catch-up rules, so that
// users can assert which slots fire in their zones.
//
// A schedule may run under an execution grant (CreateGrant, RevokeGrant):
// at fire time, a revoked, expired or out-of-scope grant records the slot as
// skipped with the reason, and the chain goes on; the workflow reads the
// grant's subject from workflow.RunInfo.GrantSubject.
//
// # When a schedule fires
//
//	spec, err := schedule.ParseSpec("30 2 * * *", "America/New_York")
//	if err != nil {
//		// a *CronError, *ZoneError or *NoOccurrenceError; all match ErrInvalid
//	}
//	for _, occurrence := range spec.NextN(time.Now(), 5) {
//		fmt.Println(occurrence.At, occurrence.Note)
//	}
//
// Spec.Next returns the first Occurrence strictly after a time; NextN the next
// n. Occurrences are whole seconds and strictly increase: Next(o.At) is the
// occurrence after o. `tributary schedule next` prints them from the command
// line.
//
// # Cron expressions
//
// ParseSpec takes the standard 5 fields (minute, hour, day of month, month,
// day of week), optionally a 6th leading seconds field, or a descriptor:
// @yearly (@annually), @monthly, @weekly, @daily (@midnight), @hourly, or
// @every <duration>. It parses them with github.com/robfig/cron/v3, and keeps
// cron's day rule: when day of month and day of week are both restricted
// (neither is *), a day matches either ("0 0 13 * 5" fires on every 13th and
// every Friday). "0 0 29 2 *" fires in leap years only and "0 0 31 * *" in
// months with 31 days; an expression that matches no date at all, such as
// "0 0 30 2 *", is rejected with a *NoOccurrenceError.
//
// @every d fires every d of real elapsed time. Next(after) is after + d; the
// schedule will anchor the chain to its start by passing each previous
// occurrence, so its slots are start + k·d.
//
// # Time zones
//
// A spec's zone is an IANA name such as "Europe/Paris". The empty zone is UTC,
// never the server's zone, and "Local" is rejected: a schedule fires at the
// same instants on every machine. The zone is not part of the expression: a
// CRON_TZ= or TZ= prefix is rejected.
//
// # Daylight saving time
//
// On the day clocks spring forward some wall times do not exist (02:00 to
// 02:59 in New York); on the day they fall back some occur twice (01:00 to
// 01:59). robfig/cron alone skips the first kind and fires the second twice.
// Tributary does what cronie and Vixie cron do, and what users expect of a
// daily job:
//
//   - A spec is fixed-time when neither its minute nor its hour field
//     contains a wildcard (* or ?) or a step (/): each is a number, a name, a
//     range or a list of them, such as "30 2 * * *", "0 9-17 * * 1-5" or
//     "0,30 8,20 * * *". The seconds field does not count. @daily, @weekly,
//     @monthly and @yearly are fixed-time; @hourly and @every are not.
//   - A fixed-time spec fires once for each matching wall time of each day.
//     When the wall time does not exist, it fires once at the instant the
//     clocks jump to: 02:30 on the spring-forward day in New York fires at
//     03:00 EDT, the first instant after the gap (in Lord Howe, whose clocks
//     jump from 02:00 to 02:30, at 02:30). Several wall times in one gap
//     (02:00 and 02:30), and the wall time the clocks jump to (03:00), make
//     one occurrence, whose Nominal is the first of them. When the wall time
//     occurs twice, it fires once, at the first occurrence (01:30 EDT, not
//     01:30 EST), and not in the repeated hour.
//   - Any other spec follows real elapsed time: it fires at every instant
//     whose wall time matches. "0 * * * *" fires 23 times on the
//     spring-forward day in New York and 25 times on the fall-back day (at
//     01:00 EDT and at 01:00 EST); "*/15 2 * * *" does not fire at all on the
//     spring-forward day.
//
// Occurrence.Nominal is the wall time the expression named, Occurrence.Shifted
// marks an occurrence moved to the end of a gap, and Occurrence.Note explains
// in a sentence what daylight saving time did, for the run ledger.
//
// A DST policy (Spec.WithDST) changes what a fixed-time spec does:
//
//   - gap DSTGapShift runs a wall time the clocks jumped over later by the
//     jump's length: 02:30 on New York's spring-forward day runs at 03:30.
//   - gap DSTGapSkip does not run it: the occurrence has Skipped set, at
//     the instant of the jump, and its Note says the time did not exist.
//   - fold DSTFoldLast runs a wall time that occurs twice at its second
//     instant: 01:30 EST, not 01:30 EDT.
//   - fold DSTFoldBoth runs it at both, two occurrences.
//
// Whatever the policy, wall times that fall on the same instant make one
// occurrence, and a spec that is not fixed-time follows elapsed time.
//
// # Calendar terms
//
// The day fields take terms robfig/cron does not (see ParseSpec), each in
// one sentence:
//
//   - L is the last day of the month: "0 18 L * *".
//   - L-n is n days before it: "0 18 L-2 * *" is the third-to-last day.
//   - nW is the Monday-to-Friday day nearest day n, in the same month:
//     "0 9 15W * *" runs on Friday the 14th when the 15th is a Saturday.
//   - LW is the last Monday-to-Friday day: "0 18 LW * *".
//   - nL (or FRIL) in the day of week is the month's last such weekday:
//     "0 9 * * 5L" is the last Friday.
//   - n#k (or MON#2) is the month's k-th such weekday: "0 9 * * MON#2" is
//     the second Monday.
//
// # Excluded dates
//
// Spec.WithExclusions takes dates a spec does not fire on (a holiday
// calendar's) and what a slot on one does: ExcludedSkip records it as
// skipped, naming the calendar and the date ("0 9 * * 1-5" skips 25
// December); ExcludedNextBusinessDay moves it to the same wall time on the
// next Monday-to-Friday date not excluded (25 December 2026, a Friday, to
// Monday 28 December), placed there with the DST policy, one slot with any
// slot already at that instant. A schedule names holiday calendars
// (Params.Calendars, Client.CreateCalendar) and the policy
// (Params.OnExcluded); a change to a calendar applies to the slots not yet
// fired.
//
// # Recurrence rules
//
// ParseRRule (and Params.RRule) takes an RFC 5545 rule in place of a cron
// expression, with its DTSTART in the schedule's zone: "DTSTART:20270105T090000"
// and "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU" is every other Tuesday at
// 09:00. A rule of FREQ=DAILY or coarser is fixed-time, a finer one follows
// elapsed time; DST policies and excluded dates apply as to cron.
package schedule
