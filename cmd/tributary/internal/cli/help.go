package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// printHelp prints cmd's help: its summary and description, usage,
// subcommands, examples, flags and the environment variables they default
// to.
func printHelp(w io.Writer, cmd *cobra.Command) {
	path := cmd.CommandPath()
	_, usage, _ := strings.Cut(cmd.Use, " ")
	if usage == "" {
		usage = "[flags]"
		if isGroup(cmd) {
			usage = "<command>"
		}
	}

	fmt.Fprintf(w, "%s\n", cmd.Short)
	if cmd.Long != "" {
		fmt.Fprintln(w)
		for line := range strings.SplitSeq(strings.TrimSpace(cmd.Long), "\n") {
			fmt.Fprintf(w, "%s\n", strings.TrimSpace(line))
		}
	}
	fmt.Fprintf(w, "\nUsage:\n  %s %s\n", path, usage)

	subcommands := visibleCommands(cmd)
	if len(subcommands) > 0 {
		fmt.Fprintf(w, "\nCommands:\n")
		width := 0
		for _, sub := range subcommands {
			width = max(width, len(sub.Name()))
		}
		for _, sub := range subcommands {
			fmt.Fprintf(w, "  %-*s  %s\n", width, sub.Name(), sub.Short)
		}
	}

	fmt.Fprintf(w, "\nExample:\n")
	for line := range strings.SplitSeq(strings.TrimSpace(cmd.Example), "\n") {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(line))
	}

	if flags := flagList(cmd.LocalFlags()); flags != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", flags)
	}
	if flags := flagList(cmd.InheritedFlags()); flags != "" {
		fmt.Fprintf(w, "\nGlobal flags:\n%s", flags)
	}

	if vars := envVars(cmd); len(vars) > 0 {
		fmt.Fprintf(w, "\nEnvironment (a flag given on the command line wins over its variable):\n")
		width := 0
		for _, v := range vars {
			width = max(width, len(v.key))
		}
		for _, v := range vars {
			fmt.Fprintf(w, "  %-*s  %s\n", width, v.key, v.flags)
		}
	}

	if len(subcommands) > 0 {
		fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's flags.\n", path)
	}
}

// visibleCommands are cmd's subcommands but the hidden ones (help,
// __complete), sorted by name.
func visibleCommands(cmd *cobra.Command) []*cobra.Command {
	var visible []*cobra.Command
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			visible = append(visible, sub)
		}
	}
	return visible
}

// flagList lists the flags of fs but --help, two lines each: the flag with
// the name of its value, then its usage.
func flagList(fs *pflag.FlagSet) string {
	var flags strings.Builder
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || f.Hidden {
			return
		}
		typeName, usage := pflag.UnquoteUsage(f)
		fmt.Fprintf(&flags, "  --%s", f.Name)
		if typeName != "" {
			fmt.Fprintf(&flags, " %s", typeName)
		}
		fmt.Fprintf(&flags, "\n      %s\n", usage)
	})
	return flags.String()
}
