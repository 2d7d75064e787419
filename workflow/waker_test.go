package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestWakeAnnounced starts runs for later from an insert-only client: a
// start within the horizon is announced to the working client, which times
// it itself instead of leaving it to River's scheduler (up to five seconds
// late); a far one is left to River. (The timed wake-up itself is tested by
// TestSleep.)
func TestWakeAnnounced(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	working := startClient(t, db, echo)
	insertOnly, err := NewClient(db.Pool, &Config{Schema: db.Schema, Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { stopClient(t, insertOnly) }) // its Result waiter holds a connection
	ctx := ctxT(t)

	timed := working.waker.Timed

	listening := working.waker.Listening()
	select { // an announcement made before would be lost (River's scheduler wakes that job)
	case <-listening:
	case <-ctx.Done():
		t.Fatal("the working client's wake-up listener did not start")
	}

	far, err := echo.Start(ctx, insertOnly, greetIn{Name: "later"}, &StartOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	near, err := echo.Start(ctx, insertOnly, greetIn{Name: "soon"}, &StartOpts{ScheduledAt: time.Now().Add(time.Minute)})
	require.NoError(t, err)
	nearRun, err := near.Get(ctx)
	require.NoError(t, err)
	waitCond(t, "the working client to time the announced wake-up", nil, func(context.Context) (bool, error) {
		return timed(nearRun.JobID), nil
	})

	farRun, err := far.Get(ctx)
	require.NoError(t, err)
	require.False(t, timed(farRun.JobID), "a wake-up beyond the horizon is River's")
}
