package cli

import (
	"cmp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envVar is an environment variable a command reads, and the flags it is
// the default of: "--database-url".
type envVar struct {
	key   string
	flags string
}

// envVars lists the environment variables of cmd's flags and of every
// command below it, sorted.
func envVars(cmd *cobra.Command) []envVar {
	flagsOf := map[string][]string{}
	visit := func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			if v, ok := f.Value.(*envFlag); ok && !slices.Contains(flagsOf[v.key], "--"+f.Name) {
				flagsOf[v.key] = append(flagsOf[v.key], "--"+f.Name)
			}
		})
	}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		visit(cmd.LocalFlags())
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(cmd)

	vars := make([]envVar, 0, len(flagsOf))
	for key, flags := range flagsOf {
		vars = append(vars, envVar{key: key, flags: "default of " + strings.Join(flags, ", ")})
	}
	slices.SortFunc(vars, func(a, b envVar) int { return cmp.Compare(a.key, b.key) })
	return vars
}

// envFlag is a string flag whose default is an environment variable, read
// when the command runs and not when --help prints, so that help never
// shows a password from DATABASE_URL. A value given on the command line
// wins, even an empty one; then the variable; then the fallback.
type envFlag struct {
	env      *Env
	fallback string
	key      string
	set      bool
	value    string
}

// envString declares a string flag on fs whose default is the environment
// variable key, else fallback. Its usage ends with "(default $KEY, else
// <fallbackText>)"; an empty fallbackText leaves out the "else" part. The
// variable is listed in the command's --help.
func envString(fs *pflag.FlagSet, env *Env, name, key, fallback, usage, fallbackText string) *envFlag {
	f := &envFlag{env: env, fallback: fallback, key: key}
	usage += " (default $" + key
	if fallbackText != "" {
		usage += ", else " + fallbackText
	}
	fs.Var(f, name, usage+")")
	return f
}

// Get returns the flag's value: from the command line, else from the
// environment, else the fallback.
func (f *envFlag) Get() string {
	if f.set {
		return f.value
	}
	if v := f.env.Getenv(f.key); v != "" {
		return v
	}
	return f.fallback
}

// Set is pflag.Value's Set.
func (f *envFlag) Set(s string) error {
	f.value, f.set = s, true
	return nil
}

// String is pflag.Value's String. It is the command-line value only, never
// the environment's.
func (f *envFlag) String() string { return f.value }

// Type is pflag.Value's Type.
func (f *envFlag) Type() string { return "string" }
