package wfruntime

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recordingBatcher starts a batcher whose flush records each batch it is
// given and announces it on flushed.
func recordingBatcher(t *testing.T, spacing time.Duration) (b *Batcher[int, struct{}], batches func() [][]int, flushed chan struct{}) {
	t.Helper()
	var (
		mu  sync.Mutex
		got [][]int
	)
	flushed = make(chan struct{}, 100)
	b = NewBatcher(1, 10, spacing, func(_ context.Context, items []*BatchItem[int, struct{}]) error {
		batch := make([]int, 0, len(items))
		for _, item := range items {
			batch = append(batch, item.Req)
		}
		mu.Lock()
		got = append(got, batch)
		mu.Unlock()
		flushed <- struct{}{}
		return nil
	})
	b.Start()
	t.Cleanup(b.Stop)
	return b, func() [][]int {
		mu.Lock()
		defer mu.Unlock()
		return append([][]int(nil), got...)
	}, flushed
}

func waitFlushed(t *testing.T, flushed <-chan struct{}) {
	t.Helper()
	select {
	case <-flushed:
	case <-time.After(10 * time.Second):
		t.Fatal("no batch was flushed within 10s")
	}
}

// TestBatcherSpacing checks that a request after a quiet spell is written at
// once, that requests arriving within the spacing of the previous batch
// wait for it to pass and then share one batch, and that stopping the
// batcher cuts the wait short without losing them.
func TestBatcherSpacing(t *testing.T) {
	t.Parallel()

	t.Run("LoneRequestGoesAtOnce", func(t *testing.T) {
		t.Parallel()
		b, batches, _ := recordingBatcher(t, time.Hour)
		// do returns only once its batch is written: with an hour's spacing
		// that means the first batch did not wait for the spacing.
		_, err := b.Do(context.Background(), 1)
		require.NoError(t, err)
		require.Equal(t, [][]int{{1}}, batches())
	})

	t.Run("RequestsWithinSpacingShareABatch", func(t *testing.T) {
		t.Parallel()
		b, batches, flushed := recordingBatcher(t, time.Hour)
		b.Send(1)
		waitFlushed(t, flushed)
		for i := 2; i <= 4; i++ {
			b.Send(i)
		}
		b.Stop() // the spacing has not passed: stop ends the wait and writes what is queued
		require.Equal(t, [][]int{{1}, {2, 3, 4}}, batches())
	})

	t.Run("ZeroSpacingDoesNotWait", func(t *testing.T) {
		t.Parallel()
		b, batches, _ := recordingBatcher(t, 0)
		for i := 1; i <= 3; i++ {
			_, err := b.Do(context.Background(), i)
			require.NoError(t, err)
		}
		require.Equal(t, [][]int{{1}, {2}, {3}}, batches())
	})
}
