package durfmt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHuman(t *testing.T) {
	t.Parallel()

	for d, want := range map[time.Duration]string{
		0:                          "0s",
		-3 * time.Second:           "0s",
		400 * time.Nanosecond:      "0s",
		850*time.Microsecond + 400: "850µs",
		12*time.Millisecond + 300*time.Microsecond:            "12ms",
		850 * time.Millisecond:                                "850ms",
		1254 * time.Millisecond:                               "1.25s",
		4200 * time.Millisecond:                               "4.2s",
		10 * time.Second:                                      "10s",
		59*time.Second + 996*time.Millisecond:                 "1m",
		90 * time.Second:                                      "1m30s",
		3*time.Minute + 12*time.Second + 400*time.Millisecond: "3m12s",
		10*time.Minute + 20*time.Second:                       "10m20s",
		50*time.Minute + 200*time.Millisecond:                 "50m",
		time.Hour + 20*time.Second:                            "1h",
		2*time.Hour + 5*time.Minute + 10*time.Second:          "2h5m",
		3*time.Hour + 30*time.Minute:                          "3h30m",
		50 * time.Hour:                                        "50h",
	} {
		require.Equal(t, want, Human(d), "%d", d)
	}
}
