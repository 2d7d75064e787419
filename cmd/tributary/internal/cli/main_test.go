package cli

import (
	"testing"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) {
	testdb.Main(m)
}
