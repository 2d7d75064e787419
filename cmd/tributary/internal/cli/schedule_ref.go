package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// scheduleRefUsage is how the usage line of a command that acts on one
// schedule names it.
const scheduleRefUsage = "<id-or-key> [--owner <owner>]"

// refCommand is command for a command that acts on one schedule, named by
// its argument <id-or-key> with the --owner flag of addRefFlags: the shell
// completes the argument (completeScheduleRefs).
func refCommand(env *Env, cmd *cobra.Command, setup func(fs *pflag.FlagSet, env *Env) Action) *cobra.Command {
	cmd.ValidArgsFunction = completeScheduleRefs(env)
	return command(env, cmd, setup)
}

// refFlags is the --owner flag of a command that acts on one schedule,
// which its argument <id-or-key> names: an argument that parses as a
// schedule id is that id, which names the schedule alone; anything else is
// a key (schedule create --key) of the owner --owner names, "" by default.
// Keys are never shaped like ids, so the two can't be confused.
type refFlags struct {
	fs    *pflag.FlagSet
	owner *string
}

func addRefFlags(fs *pflag.FlagSet) *refFlags {
	return &refFlags{fs: fs, owner: fs.String("owner", "",
		"with a key: the `owner` the key belongs to, as given to 'schedule create --owner' (default \"\", no owner); an id names the schedule alone, without --owner")}
}

// ref parses the arguments of schedule command cmd, which takes
// <id-or-key> and nothing else; flags may come before or after it.
func (f *refFlags) ref(cmd string, args []string) (schedule.Ref, error) {
	switch {
	case len(args) == 0:
		return schedule.Ref{}, withHint(usageErrorf("schedule %s needs <id-or-key>", cmd),
			fmt.Sprintf("run it as 'tributary schedule %s %s'; find ids and keys with 'tributary schedule list'", cmd, scheduleRefUsage))
	case len(args) > 1:
		return schedule.Ref{}, usageErrorf("unexpected argument %q", args[1])
	case args[0] == "":
		return schedule.Ref{}, withHint(usageErrorf("schedule %s: the schedule's id or key is empty", cmd),
			"pass the id or the key of a schedule; find them with 'tributary schedule list'")
	}
	id, err := uuid.Parse(args[0])
	if err != nil {
		return schedule.ByKey(*f.owner, args[0]), nil
	}
	if f.fs.Changed("owner") {
		return schedule.Ref{}, withHint(usageErrorf("%s is a schedule id, and an id names the schedule alone: --owner goes with a key", args[0]),
			"leave --owner out, or pass the schedule's key instead of its id")
	}
	return schedule.ByID(id), nil
}

// refArgs are the words that name ref on a command line: its id, or its
// key, with --owner when the owner is not "".
func refArgs(ref schedule.Ref) string {
	switch {
	case ref.Key == "":
		return ref.ID.String()
	case ref.Owner == "":
		return argQuote(ref.Key)
	}
	return argQuote(ref.Key) + " --owner " + argQuote(ref.Owner)
}

// argQuote quotes s for a POSIX shell when it needs it, in double quotes,
// so that it can stand in a command that a message quotes in single
// quotes: 'tributary schedule list --owner "acme corp"'.
func argQuote(s string) string {
	if shellQuote(s) == s {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s) + `"`
}

// scheduleArgs are the words that name s on a command line, for the
// commands a message suggests: its key (with --owner) when it has one, else
// its id.
func scheduleArgs(s *schedule.Schedule) string {
	if s.Key == "" {
		return s.ID.String()
	}
	return refArgs(schedule.ByKey(s.Owner, s.Key))
}

// keyNotFound is the error of a key ref names that its owner does not
// have.
func keyNotFound(ref schedule.Ref) error {
	if ref.Owner == "" {
		return withHint(fmt.Errorf("no schedule with key %q of owner \"\"", ref.Key),
			"keys are unique per owner: pass --owner for another owner's key, or see 'tributary schedule list'")
	}
	return withHint(fmt.Errorf("no schedule with key %q of owner %q", ref.Key, ref.Owner),
		"see 'tributary schedule list --owner "+argQuote(ref.Owner)+"'")
}

// refError is the error of the schedule client refusing ref, a key no
// schedule can have (one with a "/", over 200 bytes): a mistake on the
// command line. nil when err is something else.
func refError(err error, ref schedule.Ref) error {
	var validation *schedule.ValidationError
	if ref.Key == "" || !errors.As(err, &validation) || !strings.HasPrefix(validation.Field, "Ref") {
		return nil
	}
	problem := validation.Problem
	if strings.HasPrefix(problem, "is ") {
		problem = "it " + problem
	}
	// The problem says what to do, or there is nothing to do but pass
	// another argument.
	return withHint(&usageError{err: fmt.Errorf("%q is not a schedule id, nor a key a schedule can have: %s", shorten(ref.Key, errorColumnWidth), problem)}, "")
}

// declaredNote says what becomes of an update of s, a schedule a service
// declares in its code (s.Origin says which); "" for one no service
// declares (any more).
func declaredNote(s *schedule.Schedule) string {
	if s.DeclaredBy == "" || s.UndeclaredAt != nil {
		return ""
	}
	return "a 'schedule update' lasts only until the service's next Declare puts the code's spec back"
}

// completionTimeout bounds the database work of completing an argument.
const completionTimeout = 3 * time.Second

// completeScheduleRefs completes the <id-or-key> of a command that acts on
// one schedule: the keys of the owner --owner names ("" by default), and,
// without --owner, the ids too; each with the schedule's name. It reads
// the newest 1000 schedules, from the database the command's flags (or
// DATABASE_URL) name, and completes nothing when it can't read them: Tab
// must not print errors.
func completeScheduleRefs(env *Env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		const directive = cobra.ShellCompDirectiveNoFileComp
		if len(args) > 0 {
			return nil, directive
		}
		fs := cmd.Flags()
		url, okURL := fs.Lookup("database-url").Value.(*envFlag)
		schemaFlag, okSchema := fs.Lookup("schema").Value.(*envFlag)
		if !okURL || !okSchema {
			return nil, directive
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		pool, schema, err := (&databaseFlags{env: env, url: url, schema: schemaFlag}).pool(ctx)
		if err != nil {
			return nil, directive
		}
		defer pool.Close()
		wf, err := workflow.NewClient(pool, &workflow.Config{Schema: schema, Logger: env.Logger})
		if err != nil {
			return nil, directive
		}
		sc, err := schedule.New(wf, &schedule.Config{Logger: env.Logger})
		if err != nil {
			return nil, directive
		}
		owner, _ := fs.GetString("owner")
		params := &schedule.ListParams{Owner: owner, Limit: maxListLimit} // Owner "" lists every owner's
		schedules, err := sc.List(ctx, params)
		if err != nil {
			return nil, directive
		}
		var completions []cobra.Completion
		for _, s := range schedules {
			name := oneLine(s.Name)
			if s.Key != "" && s.Owner == owner && strings.HasPrefix(s.Key, toComplete) {
				completions = append(completions, cobra.CompletionWithDesc(s.Key, name))
			}
			if !fs.Changed("owner") && strings.HasPrefix(s.ID.String(), toComplete) {
				completions = append(completions, cobra.CompletionWithDesc(s.ID.String(), name))
			}
		}
		return completions, directive
	}
}
