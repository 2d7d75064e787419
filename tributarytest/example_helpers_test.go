package tributarytest_test

import (
	"fmt"
	"testing"
)

// exampleT stands in, in the runnable examples, for the *testing.T a test
// passes to tributarytest.New; done runs its cleanups (stops the Env and
// drops its schema).
func exampleT() (t testing.TB, done func()) {
	e := &exampleTB{}
	return e, e.cleanup
}

type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (e *exampleTB) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleTB) Helper()                           {}
func (e *exampleTB) Log(...any)                        {}
func (e *exampleTB) Logf(string, ...any)               {}
func (e *exampleTB) Name() string                      { return "Example" }

func (e *exampleTB) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}
