package workflow

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
)

// TestHeldReasonsAreTheEngines keeps Run.Held's documented values those the
// engine reads runs with: the constants are spelled out in package workflow
// so that go doc shows them, not an internal name.
func TestHeldReasonsAreTheEngines(t *testing.T) {
	t.Parallel()

	require.Equal(t, engine.HeldTenantLimit, HeldTenantLimit)
	require.Equal(t, engine.HeldTenantRate, HeldTenantRate)
}
