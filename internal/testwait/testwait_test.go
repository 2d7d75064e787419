package testwait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testwait"
)

// TestUntil: the condition is checked at once, again on each wake-up
// (a nil channel never wakes), and what is missing comes back at the
// deadline.
func TestUntil(t *testing.T) {
	t.Parallel()

	wake := make(chan struct{})
	checks := 0
	done := make(chan error)
	go func() {
		done <- testwait.Until(t.Context(), func(context.Context) error {
			checks++
			if checks < 3 {
				return errors.New("not yet")
			}
			return nil
		}, nil, wake)
	}()
	// Wake-ups that come while a check is due already are one: wake until
	// the third check passes.
	for waiting := true; waiting; {
		select {
		case err := <-done:
			require.NoError(t, err)
			waiting = false
		case wake <- struct{}{}:
		}
	}
	require.Equal(t, 3, checks)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	require.EqualError(t, testwait.Until(ctx, func(context.Context) error { return errors.New("the row is missing") }), "the row is missing")
}
