// Package cli is the `tributary` command line, built on spf13/cobra:
// newRootCommand builds the command tree from one constructor per command,
// and Main runs a command line against it.
//
// A command file has a constructor that returns its *cobra.Command, whose
// flags and action a setup function declares:
//
//	func newDemoCommand(env *Env) *cobra.Command {
//		return command(env, &cobra.Command{
//			Use:     "demo",
//			Short:   "Run example workflows on a throw-away Postgres",
//			Example: "tributary demo --addr 127.0.0.1:8080",
//		}, setupDemo)
//	}
//
//	func setupDemo(fs *pflag.FlagSet, env *Env) Action {
//		addr := fs.String("addr", "127.0.0.1:8080", "`address` to serve the UI on")
//		return func(ctx context.Context, args []string) error {
//			return runDemo(ctx, env, *addr)
//		}
//	}
//
// and newRootCommand adds it (group adds subcommands to a group). A
// command that talks to the database builds its action with dbCommand
// (run_command.go) instead of writing the skeleton again: the database
// flags and --json, its arguments read by a parse of its own before
// anything connects, and the clients its run is given (runCommand for
// `<cmd> <run-id>`, scheduleCommand for `<cmd> <id-or-key>`):
//
//	func setupWorkflowRetry(fs *pflag.FlagSet, env *Env) Action {
//		return runCommand(fs, env, "retry", "print the run … as JSON", func(ctx context.Context, c *commandRun, id uuid.UUID) error {
//			…
//		})
//	}
//
// There is no global registry: every call of Main builds a fresh tree for
// its Env, so flag values never leak from one run to the next.
//
// Main parses the command line, prints help for --help, -h or `help
// <command>`, and turns a command's error into one line on stderr:
// `tributary: <what went wrong>; <what to do>`. Exit codes: 0 success, 1
// the command failed, 2 the command line was wrong.
//
// Flags are GNU style: --name value or --name=value. The Go style that this
// command line took before it moved to cobra, a single dash before a long
// name (-name value, -name=value), still works: Main rewrites a
// single-dash word that names one of the command's flags to its
// double-dash form before parsing. A single-dash word that names no flag
// is refused, as before, with "flag provided but not defined: -word". The
// one short flag is -h, for help.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes returned by Main.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Action runs a command once its flags are parsed. args are the arguments
// left after the flags.
type Action func(ctx context.Context, args []string) error

// Env is everything a command may use of the outside world, so that tests
// can run commands in-process.
type Env struct {
	// Getenv reads an environment variable.
	Getenv func(key string) string

	// Logger is the logger handed to libraries, such as the migrator and
	// River. The global --log-level and --log-format flags replace it, for
	// the run they are given in, with one that writes to Stderr.
	Logger *slog.Logger

	// LogLevel, when set, is the level of Logger, which commands may
	// change: serve logs Tributary's work at info by default. The global
	// --log-level and --log-format flags clear it: the level given is
	// the level used.
	LogLevel *slog.LevelVar

	// Program is how a person runs this program again from a shell, for
	// the commands that print other commands to run (the demo's hints):
	// "tributary" when it is on the PATH. Empty means "tributary".
	Program string

	// Stderr receives errors and diagnostics.
	Stderr io.Writer

	// Stdout receives the command's output.
	Stdout io.Writer

	// Stdin is read for typed confirmations; nil reads nothing.
	Stdin io.Reader

	// Interactive reports whether Stdin is a terminal a person types at.
	// Commands that destroy data ask there for a typed confirmation, and
	// elsewhere refuse without their --yes. Nil means no.
	Interactive func() bool
}

// DefaultEnv returns the Env of the running process, logging warnings and
// errors to stderr.
func DefaultEnv() *Env {
	level := &slog.LevelVar{}
	level.Set(slog.LevelWarn)
	return &Env{
		Getenv:   os.Getenv,
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		LogLevel: level,
		Program:  programName(),
		Stderr:   os.Stderr,
		Stdout:   os.Stdout,
		Stdin:    os.Stdin,
		Interactive: func() bool {
			info, err := os.Stdin.Stat()
			return err == nil && info.Mode()&os.ModeCharDevice != 0
		},
	}
}

// program is env.Program, or "tributary".
func (env *Env) program() string {
	if env.Program == "" {
		return "tributary"
	}
	return env.Program
}

// groupAnnotation marks a command that only groups subcommands: run without
// one, it says so.
const groupAnnotation = "tributary_group"

// newRootCommand builds the `tributary` command tree for env.
func newRootCommand(env *Env) *cobra.Command {
	root := group(&cobra.Command{
		Use:   "tributary",
		Short: "Durable workflows and cron schedules on Postgres, built on River",
		Example: `tributary migrate up --database-url postgres://localhost:5432/app
			tributary completion bash > /etc/bash_completion.d/tributary`,
	},
		newBenchCommand(env),
		newCalendarCommand(env),
		newCompletionCommand(env),
		newDemoCommand(env),
		newGrantCommand(env),
		newMigrateCommand(env),
		newScheduleCommand(env),
		newServeCommand(env),
		newTenantsCommand(env),
		newVersionCommand(env),
		newWorkersCommand(env),
		newWorkflowCommand(env),
	)
	root.Flags().Bool("version", false, "print the version, the commit and River's version, as 'tributary version' does")
	addLogFlags(root, env)

	root.SetHelpCommand(&cobra.Command{
		Use:     "help [command…]",
		Short:   "Print a command's help",
		Example: "tributary help migrate up",
		Hidden:  true,
		Args:    cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			return runHelp(env, root, args)
		},
	})
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { printHelp(env.Stdout, cmd) })
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return flagError(env, cmd, err) })
	root.CompletionOptions.DisableDefaultCmd = true // newCompletionCommand is ours, with help like the others
	root.SilenceErrors = true                       // Main prints errors, as one line
	root.SilenceUsage = true

	var prepare func(cmd *cobra.Command)
	prepare = func(cmd *cobra.Command) {
		cmd.InitDefaultHelpFlag() // now, so that goStyleFlags knows -help
		cmd.SuggestionsMinimumDistance = 2
		if cmd.Annotations[groupAnnotation] != "" {
			cmd.Args = cobra.ArbitraryArgs
			cmd.RunE = func(cmd *cobra.Command, args []string) error { return runGroup(env, cmd, args) }
		}
		for _, sub := range cmd.Commands() {
			prepare(sub)
		}
	}
	prepare(root)
	validate(root, nil)
	return root
}

// command makes cmd run the action that setup returns, with the flags
// setup declares on cmd's flag set.
func command(env *Env, cmd *cobra.Command, setup func(fs *pflag.FlagSet, env *Env) Action) *cobra.Command {
	action := setup(cmd.Flags(), env)
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return action(cmd.Context(), args) }
	return cmd
}

// group adds subcommands to cmd. A cmd without an action of its own is a
// group: run without a subcommand, it says one is missing and lists them.
// A command with an action may have subcommands too: `bench` runs its own
// action, `bench schedules` its subcommand.
func group(cmd *cobra.Command, subcommands ...*cobra.Command) *cobra.Command {
	if cmd.RunE == nil && cmd.Run == nil {
		if cmd.Annotations == nil {
			cmd.Annotations = map[string]string{}
		}
		cmd.Annotations[groupAnnotation] = "true"
	}
	cmd.AddCommand(subcommands...)
	return cmd
}

// isGroup reports whether cmd only groups subcommands.
func isGroup(cmd *cobra.Command) bool { return cmd.Annotations[groupAnnotation] != "" }

// validate panics when a command of the tree is malformed: both are
// programming errors, caught by any test that runs a command. path is the
// names of cmd's parents below the root.
func validate(cmd *cobra.Command, path []string) {
	name := cmd.Name()
	switch {
	case name == "" || strings.HasPrefix(name, "-") || cmd.Use != strings.TrimSpace(cmd.Use):
		panic(fmt.Sprintf("cli: invalid command name %q", cmd.Use))
	case cmd.Short == "" || strings.Contains(cmd.Short, "\n"):
		panic("cli: command " + name + " needs a one-line Short")
	case cmd.Example == "":
		panic("cli: command " + name + " needs an Example")
	case !cmd.Runnable() && !isGroup(cmd):
		panic("cli: command " + name + " needs either RunE or subcommands")
	}
	var subPath []string
	if cmd.HasParent() {
		subPath = append(append(subPath, path...), name)
	}
	names := make(map[string]bool)
	for _, sub := range cmd.Commands() {
		validate(sub, subPath)
		if names[sub.Name()] {
			panic("cli: command registered twice: " + strings.Join(append(subPath, sub.Name()), " "))
		}
		names[sub.Name()] = true
	}
}

// Main runs the command line args (without the program name) and returns
// the exit code.
func Main(ctx context.Context, args []string, env *Env) int {
	runEnv := *env // --log-level and --log-format replace the logger of this run only
	env = &runEnv

	root := newRootCommand(env)
	root.SetArgs(subcommandFirst(root, goStyleFlags(root, args)))
	root.SetIn(eofReader{})
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)

	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, errUsagePrinted) {
		return ExitUsage
	}
	if cmd == nil {
		cmd = root
	}
	return fail(env, err, strings.Fields(cmd.CommandPath()))
}

// eofReader is cobra's standard input: commands read env.Stdin.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// errUsagePrinted ends a command line whose mistake was printed already,
// with the help it needs; Main exits with ExitUsage.
var errUsagePrinted = errors.New("usage printed")

// runGroup runs a group: it says that a subcommand is missing or unknown.
// `tributary --version` runs here too, the root being a group.
func runGroup(env *Env, cmd *cobra.Command, args []string) error {
	path := cmd.CommandPath()
	if len(args) == 0 {
		if !cmd.HasParent() {
			if v, _ := cmd.Flags().GetBool("version"); v {
				return printVersion(env.Stdout, readVersion(), false)
			}
		}
		fmt.Fprintf(env.Stderr, "tributary: missing command for %q; see the commands below\n\n", path)
		printHelp(env.Stderr, cmd)
		return errUsagePrinted
	}
	if args[0] == "help" {
		return runHelp(env, cmd, args[1:])
	}
	return unknownCommand(env, cmd, args[0])
}

// unknownCommand says that name is no subcommand of cmd, with the closest
// names when there are some, and lists them.
func unknownCommand(env *Env, cmd *cobra.Command, name string) error {
	suggest := ""
	if suggestions := cmd.SuggestionsFor(name); len(suggestions) > 0 {
		suggest = fmt.Sprintf(" (did you mean %q?)", suggestions[0])
	}
	fmt.Fprintf(env.Stderr, "tributary: unknown command %q for %q%s; see the commands below\n\n", name, cmd.CommandPath(), suggest)
	printHelp(env.Stderr, cmd)
	return errUsagePrinted
}

// runHelp handles `help [command…]` by printing that command's help.
func runHelp(env *Env, cmd *cobra.Command, names []string) error {
	for _, name := range names {
		sub := subcommand(cmd, name)
		if sub == nil {
			return unknownCommand(env, cmd, name)
		}
		cmd = sub
	}
	printHelp(env.Stdout, cmd)
	return nil
}

// subcommand is cmd's visible subcommand named name, or nil.
func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, sub := range cmd.Commands() {
		if sub.Name() == name && sub.IsAvailableCommand() {
			return sub
		}
	}
	return nil
}

// fail prints err as one line and returns its exit code. path is the
// command's words, from "tributary".
func fail(env *Env, err error, path []string) int {
	code := ExitError
	var usageErr *usageError
	if errors.As(err, &usageErr) {
		code = ExitUsage
	}

	msg := strings.Join(strings.Fields(err.Error()), " ") // one line
	var hinted *hintError
	if !errors.As(err, &hinted) {
		msg += fmt.Sprintf("; see '%s --help'", strings.Join(path, " "))
	}
	fmt.Fprintf(env.Stderr, "tributary: %s\n", msg)
	return code
}

// hintError is an error that says what to do about it.
type hintError struct {
	err  error
	hint string
}

// withHint adds what to do to err: "no database URL given; pass
// --database-url or set DATABASE_URL". An error whose message already says
// what to do after a "; " keeps its message.
func withHint(err error, hint string) error {
	if strings.Contains(err.Error(), "; ") {
		hint = ""
	}
	return &hintError{err: err, hint: hint}
}

func (e *hintError) Error() string {
	if e.hint == "" {
		return e.err.Error()
	}
	return e.err.Error() + "; " + e.hint
}
func (e *hintError) Unwrap() error { return e.err }

// usageError is a mistake on the command line; Main exits with ExitUsage.
type usageError struct{ err error }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// programName is how a person runs this program again from a shell:
// "tributary" when that name on the PATH is this binary; for a binary that
// `go run` built (in a temporary directory, removed when it exits), the go
// run command, of the release it ran or of the checkout's ./cmd/tributary;
// else the path it was started by, when that has a slash (./tributary);
// else "tributary".
func programName() string {
	exe, err := os.Executable()
	if err != nil {
		return "tributary"
	}
	if onPath, err := exec.LookPath("tributary"); err == nil && sameFile(onPath, exe) {
		return "tributary"
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		if v := readVersion().Version; strings.HasPrefix(v, "v") && !strings.ContainsAny(v, "-+") { // a release, not a pseudo-version
			return "go run github.com/tributary-go/tributary/cmd/tributary@" + v
		}
		return "go run ./cmd/tributary"
	}
	if strings.ContainsRune(os.Args[0], filepath.Separator) {
		return shellQuote(os.Args[0])
	}
	return "tributary"
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
