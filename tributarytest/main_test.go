package tributarytest_test

import (
	"testing"

	"github.com/tributary-go/tributary/tributarytest"
)

func TestMain(m *testing.M) { tributarytest.Main(m) }
