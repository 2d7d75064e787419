package wfruntime

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// testLogger logs warnings and errors to t.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// ctxT is a context bounded by a deadline generous enough for CI.
func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
