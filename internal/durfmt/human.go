package durfmt

import "time"

// Human is d rounded to what a reader cares about, written as Short writes
// it: to the microsecond below a millisecond ("850µs"), to the millisecond
// below a second ("12ms"), to the hundredth below a minute ("1.25s"), to
// the second below an hour ("3m12s", "50m") and to the minute beyond
// ("2h5m", "1h"). A zero or negative d (a measurement across two clocks
// that disagree) is "0s".
func Human(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		d = d.Round(time.Microsecond)
	case d < time.Second:
		d = d.Round(time.Millisecond)
	case d < time.Minute:
		d = d.Round(10 * time.Millisecond)
	case d < time.Hour:
		d = d.Round(time.Second)
	default:
		d = d.Round(time.Minute)
	}
	return Short(d)
}
