package pgcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ownerFile, in a cluster's directory, names the process that started it:
// "tributary pgcluster pid=<pid>". A directory without it is not ours and
// is never touched.
const (
	ownerFile   = "owner"
	ownerPrefix = "tributary pgcluster pid="
)

// dirPattern is the name of a cluster's temporary directory.
const dirPattern = "tributary-pg-"

// writeOwner records this process as the owner of the cluster in rootDir.
func writeOwner(rootDir string) error {
	if err := os.WriteFile(filepath.Join(rootDir, ownerFile), []byte(ownerPrefix+strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// removeStale stops and removes the clusters in tmpDir that a process of
// ours started and that outlived it (SIGKILL, a crash, a power cut): their
// directory has our owner file and its process is gone. A cluster whose
// owner runs, and any directory without our owner file, is left alone. It
// returns the directories it removed; a cluster it cannot remove is
// reported in the error and left for the next start.
func removeStale(ctx context.Context, binDir string, cred *credential, tmpDir string) ([]string, error) {
	entries, err := os.ReadDir(tmpDir)
	if err != nil {
		return nil, nil // nothing to look at
	}
	var (
		removed []string
		errs    []string
	)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPattern) {
			continue
		}
		rootDir := filepath.Join(tmpDir, e.Name())
		owner, err := os.ReadFile(filepath.Join(rootDir, ownerFile))
		if err != nil {
			continue // not ours, or not started yet
		}
		pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(owner), ownerPrefix)))
		if err != nil || !strings.HasPrefix(string(owner), ownerPrefix) || pid <= 0 || processAlive(pid) {
			continue
		}
		stale := &Cluster{binDir: binDir, cred: cred, dataDir: filepath.Join(rootDir, "data"), rootDir: rootDir}
		if _, err := os.Stat(filepath.Join(stale.dataDir, "postmaster.pid")); err == nil {
			// Its server runs on, or died with the machine: stop it, as
			// quickly as Postgres allows; its data is thrown away anyway.
			if _, err := stale.run(ctx, "pg_ctl", "stop", "-D", stale.dataDir, "-m", "immediate", "-w", "-t", "30"); err != nil {
				if _, statErr := os.Stat(filepath.Join(stale.dataDir, "postmaster.pid")); statErr == nil {
					errs = append(errs, fmt.Sprintf("%s: %v", rootDir, err))
					continue
				}
			}
		}
		if err := os.RemoveAll(rootDir); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", rootDir, err))
			continue
		}
		removed = append(removed, rootDir)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("pgcluster: could not remove stale clusters (remove them by hand): %s", strings.Join(errs, "; "))
	}
	return removed, nil
}
