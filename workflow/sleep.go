package workflow

import (
	"context"
	"time"

	"github.com/tributary-go/tributary/internal/engine"
)

// Sleep pauses the run for d, durably: the attempt ends, the River job is
// snoozed until the wake time (no worker slot is held, so a sleep of days
// costs nothing), and the replay after it continues past the sleep. The wake
// time is fixed the first time the sleep is reached; replays and restarts do
// not extend it. Sleep returns nil when the sleep is over, or an error that
// the workflow function must return (the attempt is suspended).
//
// Wake-up accuracy is River's: a sleep of up to 5 s wakes at the next fetch,
// a longer one when River's scheduler next moves due jobs (every 5 s by
// default).
//
// A sleep is a step of the run, recorded once it is reached (also one that
// ends at once): a replay matches it to the run's history by order and name
// like any step.
func Sleep(ctx Context, name string, d time.Duration) error {
	return sleep(ctx, name, func() time.Time { return ctx.state().c.now().Add(d) })
}

// SleepUntil is like Sleep with an absolute wake time. A time in the past
// does not park.
func SleepUntil(ctx Context, name string, t time.Time) error {
	return sleep(ctx, name, func() time.Time { return t })
}

func sleep(ctx Context, name string, wakeAt func() time.Time) error {
	w := ctx.state()
	seq, err := w.enter(name, StepKindSleep, "sleep")
	if err != nil {
		return err
	}
	defer w.leave()
	m := w.memo(name)
	if m != nil && m.Kind != StepKindSleep {
		return w.diverge(name, m, "sleep")
	}
	if m != nil && m.Status == StepStatusCompleted {
		w.replayed(name, StepKindSleep)
		return nil
	}
	return w.boundary(name, StepKindSleep, func(context.Context) error { return w.sleepOrPark(name, seq, m, wakeAt) })
}

// sleepOrPark parks the run at sleep name until its wake time, or records
// the sleep as over when that time has come.
func (w *wfContext) sleepOrPark(name string, seq int, m *memo, wakeAt func() time.Time) error {
	var wake time.Time
	if m != nil && m.WakeAt != nil {
		wake = *m.WakeAt
	} else {
		wake = wakeAt()
	}
	if !w.c.now().Before(wake) {
		done := &memo{Name: name, Kind: StepKindSleep, Status: StepStatusCompleted, Output: []byte("null"), WakeAt: &wake, Seq: &seq}
		var err error
		if m != nil { // parked earlier: keep its start and wake time
			err = w.c.db.FinishWait(context.WithoutCancel(w), w.c.pool, &engine.FinishWaitParams{RunID: w.info.ID, Name: name, Output: []byte("null"), Now: w.c.sqlNow()})
		} else {
			err = w.c.writeMemo(context.WithoutCancel(w), w.info.ID, done, w.c.now().UTC(), true)
		}
		if err != nil {
			return w.fail(name, err)
		}
		w.setMemo(done)
		return nil
	}
	_, err := w.parkTx(&parkRequest{name: name, seq: seq, kind: StepKindSleep, stepStatus: StepStatusSleeping, runStatus: StatusSleeping, wakeAt: &wake}, nil)
	return err
}
