package workflow

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// dbClock is the database's clock as this process reads it: the local
// clock plus its offset from Postgres's clock_timestamp(), measured when the
// client starts and at every heartbeat of a working client. Application
// servers' clocks drift apart, and a slot or a sleep decided by one of them
// would fire early or late by its drift; every client reading the one
// database's clock decides the same instant. Between two measurements it
// follows the local clock's monotonic reading, so a jump of the wall
// clock (NTP stepping it) counts only from the next measurement.
type dbClock struct {
	local  func() time.Time // time.Now; tests skew it
	offset atomic.Int64     // the database's clock minus the local clock, in ns
	logger *slog.Logger
	warned atomic.Int64 // the offset last warned about, in whole seconds
}

// clockWarnAfter is how far the local clock may be from the database's
// before the client warns: the decisions are the database's either way,
// but logs and metrics in local time will not match them.
const clockWarnAfter = time.Second

// clockMeasureRoundTrip is the longest round trip whose reading sets the
// offset (its error is at most half of it), once there is one.
const clockMeasureRoundTrip = 250 * time.Millisecond

func (d *dbClock) now() time.Time { return d.local().Add(time.Duration(d.offset.Load())) }

// readDatabaseClock runs read, a statement that returns the database's
// clock (zero when it returned none), and, under the database's clock,
// sets the offset from it (dbClock.measure).
func (c *Client) readDatabaseClock(ctx context.Context, first bool, read func() (time.Time, error)) error {
	if c.dbClock == nil {
		_, err := read()
		return err
	}
	return c.dbClock.measure(ctx, first, read)
}

// measure sets the offset from read, a read of the database's clock, taken
// as the local clock's reading halfway through it. A slow read (over
// clockMeasureRoundTrip) is ignored once an offset was measured, and so is
// a read that returned no time.
func (d *dbClock) measure(ctx context.Context, first bool, read func() (time.Time, error)) error {
	before := d.local()
	at, err := read()
	after := d.local()
	if err != nil || at.IsZero() {
		return err
	}
	trip := after.Sub(before)
	if !first && trip > clockMeasureRoundTrip {
		return nil
	}
	offset := at.Sub(before.Add(trip / 2))
	d.offset.Store(int64(offset))
	if secs := int64(offset / time.Second); offset.Abs() > clockWarnAfter && d.warned.Swap(secs) != secs {
		d.logger.WarnContext(ctx, "tributary: This machine's clock is off the database's; Tributary times slots and sleeps by the database's clock, but local timestamps (logs) will not match",
			slog.Duration("database_minus_local", offset.Round(time.Millisecond)))
	}
	return nil
}

// sqlNow is the now parameter of the engine's statements, which record and
// compare times in SQL by coalesce($n::timestamptz, now()): nil, so that
// the database's now() decides, unless Config.Clock is set; then the
// clock's time. River passes its own statements' now the same way (a
// stubbed time's NowOrNil), so that production costs nothing extra and a
// test's clock decides every time written.
func (c *Client) sqlNow() *time.Time {
	if c.dbClock != nil {
		return nil
	}
	now := c.clock()
	return &now
}

// clockTime is the client's clock as a rivertype.TimeGenerator: the
// engine's Jobs takes it, and, under an injected Config.Clock, River's
// Config.Test.Time, so that River's scheduling (its scheduler, its fetch,
// its completer's finalized_at, its inserts' created_at) follows the
// clock too.
type clockTime struct{ c *Client }

func (t clockTime) Now() time.Time { return t.c.now() }

func (t clockTime) NowOrNil() *time.Time { return t.c.sqlNow() }
