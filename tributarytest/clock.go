package tributarytest

import (
	"sync"
	"time"
)

// Clock is a virtual clock: it stands still until moved. Env moves it
// (Advance, AdvanceTo, Result); a test reads it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// set moves the clock to t; it never moves back.
func (c *Clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// riverTime is the clock as River's test time stub (river.TestConfig.Time),
// so that River's scheduling, fetches and completions follow it.
type riverTime struct{ c *Clock }

func (r riverTime) Now() time.Time { return r.c.Now() }

func (r riverTime) NowOrNil() *time.Time {
	now := r.c.Now()
	return &now
}
