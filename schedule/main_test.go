package schedule

import (
	"testing"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestMain runs the tests, stops a throw-away Postgres if one was started,
// and checks for leaked goroutines.
func TestMain(m *testing.M) { testdb.Main(m) }
