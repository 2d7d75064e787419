// Package cli is the `tributary` command line: a small subcommand framework
// on the standard flag package, and the commands, one file each.
//
// A command is added by a file that registers it from an init function:
//
//	func init() {
//		Register(&Command{
//			Name:    "demo",
//			Summary: "Run example workflows on a throw-away Postgres",
//			Example: "tributary demo --addr 127.0.0.1:8080",
//			Setup: func(fs *flag.FlagSet, env *Env) Action {
//				addr := fs.String("addr", "127.0.0.1:8080", "address to serve the UI on")
//				return func(ctx context.Context, args []string) error {
//					return runDemo(ctx, env, *addr)
//				}
//			},
//		})
//	}
//
// Main parses the command line, prints help for --help, and turns a
// command's error into one line on stderr: `tributary: <what went wrong>;
// <what to do>`. Exit codes: 0 success, 1 the command failed, 2 the command
// line was wrong.
package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
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

// Command is a command or a group of subcommands.
type Command struct {
	// Name is the word that selects the command, such as "migrate".
	Name string

	// Summary is a one-line description, shown in command lists and at the
	// top of --help.
	Summary string

	// Description says more than Summary, shown in --help below it: what
	// the command does in detail and what it guarantees. Optional.
	Description string

	// Usage is the synopsis after the command's path, such as
	// "<run-id> [flags]". Defaults to "[flags]" for a command and
	// "<command>" for a group.
	Usage string

	// Example is one or more example invocations, shown in --help.
	Example string

	// Setup declares the command's flags on fs, reading any defaults it
	// needs from env, and returns the action that runs the command. It is
	// called once per run, so the flag values it binds are the run's own.
	// Nil for a group.
	Setup func(fs *flag.FlagSet, env *Env) Action

	// Subcommands are a group's commands. Nil for a command, unless the
	// command has subcommands of its own besides running itself: `bench`
	// runs its Setup's action, `bench schedules` its subcommand.
	Subcommands []*Command
}

// Env is everything a command may use of the outside world, so that tests
// can run commands in-process.
type Env struct {
	// Getenv reads an environment variable.
	Getenv func(key string) string

	// Logger is the logger handed to libraries, such as the migrator.
	Logger *slog.Logger

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
	return &Env{
		Getenv: os.Getenv,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Stderr: os.Stderr,
		Stdout: os.Stdout,
		Stdin:  os.Stdin,
		Interactive: func() bool {
			info, err := os.Stdin.Stat()
			return err == nil && info.Mode()&os.ModeCharDevice != 0
		},
	}
}

// root is the `tributary` command, to which Register adds commands.
var root = &Command{
	Name:    "tributary",
	Summary: "Durable workflows and cron schedules on Postgres, built on River",
	Example: "tributary migrate up --database-url postgres://localhost:5432/app",
}

// Register adds a top-level command. It panics when the command is
// malformed or its name is taken: both are programming errors.
func Register(cmd *Command) {
	validate(cmd)
	if slices.ContainsFunc(root.Subcommands, func(c *Command) bool { return c.Name == cmd.Name }) {
		panic("cli: command registered twice: " + cmd.Name)
	}
	root.Subcommands = append(root.Subcommands, cmd)
	slices.SortFunc(root.Subcommands, func(a, b *Command) int { return cmp.Compare(a.Name, b.Name) })
}

func validate(cmd *Command) {
	switch {
	case cmd.Name == "" || strings.ContainsAny(cmd.Name, " \t\n") || strings.HasPrefix(cmd.Name, "-"):
		panic(fmt.Sprintf("cli: invalid command name %q", cmd.Name))
	case cmd.Summary == "" || strings.Contains(cmd.Summary, "\n"):
		panic("cli: command " + cmd.Name + " needs a one-line Summary")
	case cmd.Example == "":
		panic("cli: command " + cmd.Name + " needs an Example")
	case cmd.Setup == nil && len(cmd.Subcommands) == 0:
		panic("cli: command " + cmd.Name + " needs either Setup or Subcommands")
	}
	names := make(map[string]bool)
	for _, sub := range cmd.Subcommands {
		validate(sub)
		if names[sub.Name] {
			panic("cli: command registered twice: " + cmd.Name + " " + sub.Name)
		}
		names[sub.Name] = true
	}
}

// Main runs the command line args (without the program name) and returns
// the exit code.
func Main(ctx context.Context, args []string, env *Env) int {
	return run(ctx, root, []string{root.Name}, args, env)
}

func run(ctx context.Context, cmd *Command, path, args []string, env *Env) int {
	if cmd.Setup == nil {
		return runGroup(ctx, cmd, path, args, env)
	}
	if len(args) > 0 {
		if sub := subcommand(cmd, args[0]); sub != nil {
			return run(ctx, sub, append(slices.Clone(path), sub.Name), args[1:], env)
		}
	}

	fs := flag.NewFlagSet(strings.Join(path, " "), flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Main prints errors and help itself
	action := cmd.Setup(fs, env)

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(env.Stdout, cmd, path, fs)
			return ExitOK
		}
		return fail(env, usageErrorf("%v", err), path)
	}
	if err := action(ctx, fs.Args()); err != nil {
		return fail(env, err, path)
	}
	return ExitOK
}

func runGroup(ctx context.Context, cmd *Command, path, args []string, env *Env) int {
	if len(args) == 0 {
		fmt.Fprintf(env.Stderr, "tributary: missing command for %q; see the commands below\n\n", strings.Join(path, " "))
		printHelp(env.Stderr, cmd, path, nil)
		return ExitUsage
	}

	switch args[0] {
	case "-h", "-help", "--help":
		printHelp(env.Stdout, cmd, path, nil)
		return ExitOK
	case "help":
		return runHelp(cmd, path, args[1:], env)
	}

	if sub := subcommand(cmd, args[0]); sub != nil {
		return run(ctx, sub, append(slices.Clone(path), sub.Name), args[1:], env)
	}

	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(env.Stderr, "tributary: %s takes a command before any flag; see the commands below\n\n", strings.Join(path, " "))
	} else {
		fmt.Fprintf(env.Stderr, "tributary: unknown command %q for %q; see the commands below\n\n", args[0], strings.Join(path, " "))
	}
	printHelp(env.Stderr, cmd, path, nil)
	return ExitUsage
}

// subcommand is cmd's subcommand named name, or nil.
func subcommand(cmd *Command, name string) *Command {
	for _, sub := range cmd.Subcommands {
		if sub.Name == name {
			return sub
		}
	}
	return nil
}

// runHelp handles `help [command…]` by printing that command's help.
func runHelp(cmd *Command, path, args []string, env *Env) int {
	for _, name := range args {
		i := slices.IndexFunc(cmd.Subcommands, func(c *Command) bool { return c.Name == name })
		if i < 0 {
			fmt.Fprintf(env.Stderr, "tributary: unknown command %q for %q; see the commands below\n\n", name, strings.Join(path, " "))
			printHelp(env.Stderr, cmd, path, nil)
			return ExitUsage
		}
		cmd, path = cmd.Subcommands[i], append(slices.Clone(path), name)
	}

	var fs *flag.FlagSet
	if cmd.Setup != nil {
		fs = flag.NewFlagSet(strings.Join(path, " "), flag.ContinueOnError)
		cmd.Setup(fs, env)
	}
	printHelp(env.Stdout, cmd, path, fs)
	return ExitOK
}

// fail prints err as one line and returns its exit code.
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

func printHelp(w io.Writer, cmd *Command, path []string, fs *flag.FlagSet) {
	usage := cmd.Usage
	if usage == "" {
		usage = "[flags]"
		if cmd.Setup == nil {
			usage = "<command>"
		}
	}

	fmt.Fprintf(w, "%s\n", cmd.Summary)
	if cmd.Description != "" {
		fmt.Fprintln(w)
		for line := range strings.SplitSeq(strings.TrimSpace(cmd.Description), "\n") {
			fmt.Fprintf(w, "%s\n", strings.TrimSpace(line))
		}
	}
	fmt.Fprintf(w, "\nUsage:\n  %s %s\n", strings.Join(path, " "), usage)

	if len(cmd.Subcommands) > 0 {
		fmt.Fprintf(w, "\nCommands:\n")
		width := 0
		for _, sub := range cmd.Subcommands {
			width = max(width, len(sub.Name))
		}
		for _, sub := range cmd.Subcommands {
			fmt.Fprintf(w, "  %-*s  %s\n", width, sub.Name, sub.Summary)
		}
	}

	fmt.Fprintf(w, "\nExample:\n")
	for line := range strings.SplitSeq(strings.TrimSpace(cmd.Example), "\n") {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(line))
	}

	if fs != nil {
		var flags strings.Builder
		fs.VisitAll(func(f *flag.Flag) {
			typeName, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(&flags, "  --%s", f.Name)
			if typeName != "" {
				fmt.Fprintf(&flags, " %s", typeName)
			}
			fmt.Fprintf(&flags, "\n      %s\n", usage)
		})
		if flags.Len() > 0 {
			fmt.Fprintf(w, "\nFlags:\n%s", flags.String())
		}
	}

	if vars := envVars(cmd, fs); len(vars) > 0 {
		fmt.Fprintf(w, "\nEnvironment (a flag given on the command line wins over its variable):\n")
		width := 0
		for _, v := range vars {
			width = max(width, len(v.key))
		}
		for _, v := range vars {
			fmt.Fprintf(w, "  %-*s  %s\n", width, v.key, v.flags)
		}
	}

	if len(cmd.Subcommands) > 0 {
		fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's flags.\n", strings.Join(path, " "))
	}
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
