package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The tests here run the tributary binary, built once by TestMain with the
// Dockerfile's own go build command (static, CGO_ENABLED=0, the version and
// commit set by the linker), so that they check the image's binary also
// where no container can be built.
const (
	testVersion = "v0.0.0-test"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
)

// binDir holds the built binary, named tributary, for PATH.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tributary-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)

	if err := buildAsDockerfile(filepath.Join(dir, "tributary")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// moduleRoot is the repository's root, where the Dockerfile is, from this
// package's directory.
const moduleRoot = "../.."

// dockerfileBuild returns the Dockerfile's go build command, as the shell
// of its RUN instruction reads it.
func dockerfileBuild() (string, error) {
	dockerfile, err := os.ReadFile(filepath.Join(moduleRoot, "Dockerfile"))
	if err != nil {
		return "", err
	}
	text := strings.ReplaceAll(string(dockerfile), "\\\n", " ")
	for line := range strings.SplitSeq(text, "\n") {
		if run, ok := strings.CutPrefix(strings.TrimSpace(line), "RUN "); ok && strings.Contains(run, "go build") {
			return run, nil
		}
	}
	return "", errors.New("the Dockerfile has no RUN … go build … instruction")
}

// buildAsDockerfile builds the binary to out with the Dockerfile's go
// build command, its build arguments VERSION and COMMIT set to testVersion
// and testCommit, and its output path replaced by out.
func buildAsDockerfile(out string) error {
	run, err := dockerfileBuild()
	if err != nil {
		return err
	}
	const dockerOut = "-o /out/tributary"
	if !strings.Contains(run, dockerOut) {
		return fmt.Errorf("the Dockerfile's go build does not write %s: %s", dockerOut, run)
	}
	run = strings.Replace(run, dockerOut, "-o "+out, 1)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "sh", "-c", run)
	build.Dir = moduleRoot
	build.Env = append(os.Environ(), "VERSION="+testVersion, "COMMIT="+testCommit)
	if output, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building tributary as the Dockerfile does (%s): %w\n%s", run, err, output)
	}
	return nil
}

// tributary runs the built binary with args and returns its stdout,
// failing the test when it exits with an error.
func tributary(t *testing.T, args ...string) string {
	t.Helper()

	cmd := exec.CommandContext(t.Context(), filepath.Join(binDir, "tributary"), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "tributary %s: %s", strings.Join(args, " "), stderr.String())
	return string(out)
}

func TestVersionOfBuiltBinary(t *testing.T) {
	t.Parallel()

	// The linker's version and commit, and River's version from the build
	// info, which a test binary does not have.
	out := tributary(t, "version")
	require.Regexp(t, `^tributary `+testVersion+`
  commit: `+testCommit+`
  river:  v0\.\d+\.\d+
  go:     go1\.\d+.* linux/\w+
$`, out)
	require.Equal(t, out, tributary(t, "--version"))
}

func TestBinaryIsStatic(t *testing.T) {
	t.Parallel()

	// What lets the Dockerfile's binary run alone on distroless/static or
	// scratch: no dynamic loader, no shared libraries.
	f, err := elf.Open(filepath.Join(binDir, "tributary"))
	require.NoError(t, err)
	defer f.Close()
	for _, prog := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, prog.Type, "the binary names a dynamic loader")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	require.Empty(t, libs)
}

// bashCompletion sources `tributary completion bash` in bash and returns
// the completions of each line, one line of words each. Without the
// bash-completion package, which the script needs for its
// _get_comp_words_by_ref, a stand-in does that function's work for words
// without = or :.
func bashCompletion(t *testing.T, lines ...string) []string {
	t.Helper()

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is not installed: %v", err)
	}
	script := `
if [ -f /usr/share/bash-completion/bash_completion ]; then
	. /usr/share/bash-completion/bash_completion
else
	_get_comp_words_by_ref() {
		while [ $# -gt 0 ]; do
			case "$1" in
			-n) shift ;;
			cur) cur=${COMP_WORDS[COMP_CWORD]} ;;
			prev) prev=${COMP_WORDS[COMP_CWORD-1]} ;;
			words) words=("${COMP_WORDS[@]}") ;;
			cword) cword=$COMP_CWORD ;;
			esac
			shift
		done
	}
fi
source <(tributary completion bash) || exit 1
complete -p tributary >/dev/null || exit 1
complete_line() {
	COMP_LINE="$1"
	COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<<"$1"
	[[ "$1" == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	__start_tributary tributary "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
	echo "${COMPREPLY[*]}"
}
`
	for _, line := range lines {
		script += fmt.Sprintf("complete_line %q\n", line)
	}
	cmd := exec.CommandContext(t.Context(), bash, "--norc", "--noprofile", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	// compopt complains outside a real completion; anything else is an error.
	for line := range strings.SplitSeq(strings.TrimSpace(stderr.String()), "\n") {
		require.True(t, line == "" || strings.HasSuffix(line, "compopt: not currently executing completion function"), stderr.String())
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

func TestCompletionBash(t *testing.T) {
	t.Parallel()

	require.Equal(t, []string{
		"migrate",
		"pause",
		"--log-level",
		"debug info warn error",
		"bash zsh fish",
	}, bashCompletion(t,
		"tributary mig",
		"tributary schedule pa",
		"tributary serve --log-le",
		"tributary serve --log-level ",
		"tributary completion ",
	))
}

func TestCompletionOtherShells(t *testing.T) {
	t.Parallel()

	// The scripts parse in their shell where it is installed; their content
	// is checked in-process by cmd/tributary/internal/cli's TestCompletion.
	for shell, check := range map[string][]string{"zsh": {"-n"}, "fish": {"--no-execute"}} {
		script := tributary(t, "completion", shell)
		path, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("%s is not installed: its completion script is not parsed here", shell)
			continue
		}
		file := filepath.Join(t.TempDir(), "tributary."+shell)
		require.NoError(t, os.WriteFile(file, []byte(script), 0o600))
		out, err := exec.CommandContext(t.Context(), path, append(check, file)...).CombinedOutput()
		require.NoError(t, err, "%s: %s", shell, out)
	}
}
