//go:build unix

package pgcluster

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProcessAlive: a running process is alive; one killed and not reaped
// yet (a zombie, as a killed demo under a container's init) is not.
func TestProcessAlive(t *testing.T) {
	t.Parallel()

	require.True(t, processAlive(os.Getpid()))
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	require.True(t, processAlive(cmd.Process.Pid))
	require.NoError(t, cmd.Process.Kill())
	deadline := time.Now().Add(10 * time.Second)
	for processAlive(cmd.Process.Pid) { // exits, unreaped: a zombie
		require.True(t, time.Now().Before(deadline), "a killed, unreaped process still counts as alive")
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Wait()
	require.False(t, processAlive(cmd.Process.Pid))
}
