//go:build !unix

package pgcluster

import "os/exec"

// credential is a no-op where processes can't change user.
type credential struct{}

func lookupCredential() (*credential, error) { return nil, nil }

func (c *credential) apply(*exec.Cmd) {}

func (c *credential) chown(...string) error { return nil }

// processAlive cannot tell here: every owner counts as alive, so no
// cluster is ever taken for stale.
func processAlive(int) bool { return true }
