package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Set with -ldflags "-X github.com/tributary-go/tributary/cmd/tributary/internal/cli.version=v1.2.3
// -X github.com/tributary-go/tributary/cmd/tributary/internal/cli.commit=<hash>" by a
// build whose build info lacks them: the Dockerfile's, whose context has no
// .git directory for Go to stamp the commit from. When set, they win over
// the build info.
var (
	version string
	commit  string
)

const riverModule = "github.com/riverqueue/river"

// versionInfo is what `tributary version` prints.
type versionInfo struct {
	// Version is the module version of the binary: v1.2.3 when installed
	// with go install …@v1.2.3, a pseudo-version or "(devel)" for a build
	// from a checkout.
	Version string `json:"version"`

	// Commit is the VCS revision the binary was built from, when the build
	// recorded it; CommitTime is its time, and Modified says the work tree
	// had changes that were not committed.
	Commit     string     `json:"commit,omitempty"`
	CommitTime *time.Time `json:"commit_time,omitempty"`
	Modified   bool       `json:"modified,omitempty"`

	// River is the version of River (github.com/riverqueue/river) built in.
	River string `json:"river"`

	// Go is the Go toolchain that built the binary, and Platform its
	// GOOS/GOARCH.
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readVersion reads the running binary's version from its build info and
// the linker-set version and commit.
func readVersion() versionInfo {
	info, _ := debug.ReadBuildInfo()
	return versionFrom(info, version, commit)
}

// versionFrom is readVersion's work on info (nil when the binary has
// none), with the linker-set version and commit when not empty.
func versionFrom(info *debug.BuildInfo, linkedVersion, linkedCommit string) versionInfo {
	v := versionInfo{Version: "(unknown)", River: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info != nil {
		if info.Main.Version != "" {
			v.Version = info.Main.Version
		}
		if info.GoVersion != "" {
			v.Go = info.GoVersion
		}
		for _, dep := range info.Deps {
			if dep.Path == riverModule {
				v.River = dep.Version
				if dep.Replace != nil {
					v.River = dep.Replace.Version + " (replacing " + dep.Version + ")"
				}
			}
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					v.CommitTime = &t
				}
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if linkedVersion != "" {
		v.Version = linkedVersion
	}
	if linkedCommit != "" && linkedCommit != v.Commit {
		v.Commit, v.CommitTime, v.Modified = linkedCommit, nil, false
	}
	return v
}

// printVersion prints v as a few lines, or as JSON.
func printVersion(w io.Writer, v versionInfo, asJSON bool) error {
	if asJSON {
		return printJSON(w, v)
	}
	commit := v.Commit
	switch {
	case commit == "":
		commit = "(not recorded: built from a module download or without VCS information)"
	case v.CommitTime != nil:
		commit += " (" + v.CommitTime.UTC().Format(time.RFC3339) + ")"
	}
	if v.Modified {
		commit += ", with uncommitted changes"
	}
	_, err := fmt.Fprintf(w, "tributary %s\n  commit: %s\n  river:  %s\n  go:     %s %s\n", v.Version, commit, v.River, v.Go, v.Platform)
	return err
}

func newVersionCommand(env *Env) *cobra.Command {
	return command(env, &cobra.Command{
		Use:   "version",
		Short: "Print the version of tributary, the commit it was built from and the River version it contains",
		Long: `Reads the binary's build information: the module version (v1.2.3 when installed with
			go install github.com/tributary-go/tributary/cmd/tributary@v1.2.3), the VCS commit and its
			time when the build recorded them, River's module version, and the Go toolchain.
			'tributary --version' prints the same.`,
		Example: `tributary version
			tributary version --json`,
	}, setupVersion)
}

func setupVersion(fs *pflag.FlagSet, env *Env) Action {
	asJSON := fs.Bool("json", false, "print {version, commit, commit_time, modified, river, go, platform} as JSON")
	return func(_ context.Context, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return printVersion(env.Stdout, readVersion(), *asJSON)
	}
}
