package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// goStyleFlags rewrites the Go-style flags in args, a single dash before a
// long name (-name value, -name=value), to their double-dash form, so that
// command lines written for the flag package still work on cobra. Only a
// word that names a flag of the command args select is rewritten; a value
// (the word after a flag that takes one), the words after "--", and a
// completion request are left as they are. A single-dash word that names
// no flag is left for the parser to refuse.
func goStyleFlags(root *cobra.Command, args []string) []string {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return args
	}
	// A Go-style flag before the command's name hides the name from Find
	// (-log-level debug workflow …): rewrite, find again, until the command
	// found stays the same.
	var last *cobra.Command
	for {
		cmd, _, err := root.Find(args)
		if err != nil || cmd == nil {
			cmd = root
		}
		if cmd == last {
			return args
		}
		args, last = rewriteGoStyle(cmd, args), cmd
	}
}

// rewriteGoStyle is goStyleFlags for cmd's flags.
func rewriteGoStyle(cmd *cobra.Command, args []string) []string {
	cmd.InheritedFlags() // merges the parents' persistent flags into cmd.Flags()
	flags := cmd.Flags()

	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		arg := out[i]
		if arg == "--" {
			break
		}
		name, doubleDash := strings.CutPrefix(arg, "--")
		if !doubleDash {
			var dash bool
			if name, dash = strings.CutPrefix(arg, "-"); !dash || name == "" {
				continue // an argument, or "-" (standard input)
			}
		}
		name, _, hasValue := strings.Cut(name, "=")
		f := flags.Lookup(name)
		if f == nil && !doubleDash && len(name) == 1 {
			f = flags.ShorthandLookup(name)
		} else if f != nil && !doubleDash && len(name) > 1 {
			out[i] = "-" + arg
		}
		if f != nil && !hasValue && f.NoOptDefVal == "" {
			i++ // the next word is the flag's value
		}
	}
	return out
}

// subcommandFirst makes a command that has an action and subcommands
// (bench) take a subcommand's name only as its first argument, as before
// the move to cobra, whose parser looks for it past the flags too: in
// `bench --items 5 schedules`, "schedules" is an argument of bench, which
// takes none and says so. It returns args with "--" before such a word.
func subcommandFirst(root *cobra.Command, args []string) []string {
	cmd, i := root, 0
	for ; i < len(args); i++ {
		sub := subcommand(cmd, args[i])
		if sub == nil {
			break
		}
		cmd = sub
	}
	if isGroup(cmd) || !cmd.HasSubCommands() {
		return args
	}
	cmd.InheritedFlags() // merges the parents' persistent flags into cmd.Flags()
	for ; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return args
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if subcommand(cmd, arg) == nil {
				return args
			}
			return slices.Insert(slices.Clone(args), i, "--")
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		f := cmd.Flags().Lookup(name)
		if f == nil && len(name) == 1 {
			f = cmd.Flags().ShorthandLookup(name)
		}
		if f != nil && !hasValue && f.NoOptDefVal == "" {
			i++ // the next word is the flag's value
		}
	}
	return args
}

// flagError is the error of a command line whose flags cmd could not
// parse: for a group, the note that it takes a command first, with its
// help; else the flag package's words, which this command line used before
// it moved to cobra, and which its users and tests know.
func flagError(env *Env, cmd *cobra.Command, err error) error {
	if isGroup(cmd) {
		fmt.Fprintf(env.Stderr, "tributary: %s takes a command before any flag; see the commands below\n\n", cmd.CommandPath())
		printHelp(env.Stderr, cmd)
		return errUsagePrinted
	}

	var (
		notExist   *pflag.NotExistError
		needsValue *pflag.ValueRequiredError
		invalid    *pflag.InvalidValueError
	)
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		if shorthands := notExist.GetSpecifiedShortnames(); shorthands != "" {
			name = shorthands // -name, which is no flag, was read as -n -a -m -e
		}
		return usageErrorf("flag provided but not defined: -%s", name)
	case errors.As(err, &needsValue):
		return usageErrorf("flag needs an argument: -%s", needsValue.GetSpecifiedName())
	case errors.As(err, &invalid):
		f, cause := invalid.GetFlag(), errors.Unwrap(invalid)
		var numErr *strconv.NumError
		switch {
		case f.Value.Type() == "bool":
			return usageErrorf("invalid boolean value %q for -%s: parse error", invalid.GetValue(), f.Name)
		case errors.As(cause, &numErr) && errors.Is(numErr.Err, strconv.ErrRange):
			return usageErrorf("invalid value %q for flag -%s: value out of range", invalid.GetValue(), f.Name)
		case slices.Contains([]string{"int", "duration"}, f.Value.Type()):
			return usageErrorf("invalid value %q for flag -%s: parse error", invalid.GetValue(), f.Name)
		}
		return usageErrorf("invalid value %q for flag -%s: %v", invalid.GetValue(), f.Name, cause)
	}
	return &usageError{err: err}
}

// Log levels and formats that --log-level and --log-format take.
var (
	logLevels = map[string]slog.Level{
		"debug": slog.LevelDebug,
		"info":  slog.LevelInfo,
		"warn":  slog.LevelWarn,
		"error": slog.LevelError,
	}
	logFormats = []string{"text", "json"}
)

// addLogFlags adds the global --log-level and --log-format to root. Given
// on the command line, either replaces env.Logger, before the command
// runs, with a logger that writes to env.Stderr at that level in that
// format; the other keeps its default (warn, text: what DefaultEnv's
// logger does). Without them, env.Logger stays the injected one.
func addLogFlags(root *cobra.Command, env *Env) {
	flags := root.PersistentFlags()
	level := flags.String("log-level", "warn", "log `debug|info|warn|error` and above to stderr (default warn)")
	format := flags.String("log-format", "text", "write the log as `text|json`: logfmt-like lines, or one JSON object a line (default text)")
	_ = root.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions([]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions(logFormats, cobra.ShellCompDirectiveNoFileComp))

	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if !cmd.Flags().Changed("log-level") && !cmd.Flags().Changed("log-format") {
			return nil
		}
		logger, err := newLogger(env, *level, *format)
		if err != nil {
			return err
		}
		env.Logger, env.LogLevel = logger, nil
		return nil
	}
}

// newLogger returns a logger that writes to env.Stderr from level up, in
// format.
func newLogger(env *Env, level, format string) (*slog.Logger, error) {
	lvl, ok := logLevels[strings.ToLower(level)]
	if !ok {
		return nil, withHint(usageErrorf("--log-level %q is not a log level", level), "pass --log-level debug, info, warn or error")
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(env.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(env.Stderr, opts)), nil
	}
	return nil, withHint(usageErrorf("--log-format %q is not a log format", format), "pass --log-format text or --log-format json")
}
