//go:build !unix

package testdb

import "testing"

// ManyConnections is a no-op where there is no flock: such tests may then
// run side by side.
func ManyConnections(t testing.TB) { t.Helper() }
