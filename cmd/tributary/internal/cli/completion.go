package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// completionShells are the shells `tributary completion` writes a script
// for.
var completionShells = []string{"bash", "zsh", "fish"}

func newCompletionCommand(env *Env) *cobra.Command {
	cmd := command(env, &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell script that completes tributary's commands and flags in bash, zsh or fish",
		Long: `Prints a script that, loaded by the shell, completes command names, flags and some flag
			values (--log-level, --log-format) when you press Tab. The script asks the tributary
			on your PATH for its completions, so they always match the installed version.
			bash (needs the bash-completion package): source <(tributary completion bash) in
			~/.bashrc, or tributary completion bash > /etc/bash_completion.d/tributary.
			zsh: tributary completion zsh > "${fpath[1]}/_tributary", with compinit in ~/.zshrc.
			fish: tributary completion fish > ~/.config/fish/completions/tributary.fish.`,
		Example: `tributary completion bash > /etc/bash_completion.d/tributary
			source <(tributary completion bash)
			tributary completion zsh > "${fpath[1]}/_tributary"
			tributary completion fish > ~/.config/fish/completions/tributary.fish`,
	}, setupCompletion)
	cmd.ValidArgs = completionShells
	return cmd
}

func setupCompletion(_ *pflag.FlagSet, env *Env) Action {
	return func(ctx context.Context, args []string) error {
		hint := "run 'tributary completion bash', 'tributary completion zsh' or 'tributary completion fish'"
		switch {
		case len(args) == 0:
			return withHint(usageErrorf("completion needs a shell"), hint)
		case len(args) > 1:
			return usageErrorf("unexpected argument %q", args[1])
		}
		root := newRootCommand(env) // the tree the script completes
		var err error
		switch strings.ToLower(args[0]) {
		case "bash":
			err = root.GenBashCompletionV2(env.Stdout, true)
		case "zsh":
			err = root.GenZshCompletion(env.Stdout)
		case "fish":
			err = root.GenFishCompletion(env.Stdout, true)
		default:
			return withHint(usageErrorf("completion: %q is not a shell tributary completes", args[0]), hint)
		}
		if err != nil {
			return fmt.Errorf("writing the completion script: %w", err)
		}
		return nil
	}
}
