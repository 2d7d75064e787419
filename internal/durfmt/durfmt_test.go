package durfmt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestShort(t *testing.T) {
	t.Parallel()

	for d, want := range map[time.Duration]string{
		0:                                    "0s",
		850 * time.Microsecond:               "850µs",
		90 * time.Millisecond:                "90ms",
		1500 * time.Millisecond:              "1.5s",
		30 * time.Second:                     "30s",
		90 * time.Second:                     "1m30s",
		5 * time.Minute:                      "5m",
		time.Hour:                            "1h",
		time.Hour + 30*time.Minute:           "1h30m",
		2*time.Hour + 5*time.Second:          "2h0m5s",
		time.Minute + 500*time.Millisecond:   "1m0.5s",
		-(time.Hour + 30*time.Minute):        "-1h30m",
		10*time.Hour + 20*time.Minute + 30e9: "10h20m30s",
	} {
		require.Equal(t, want, Short(d), "%d", d)
		back, err := time.ParseDuration(Short(d))
		require.NoError(t, err)
		require.Equal(t, d, back, "%s parses back", Short(d))
	}
}
