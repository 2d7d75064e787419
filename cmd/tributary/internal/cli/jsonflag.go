package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// jsonFlag reads the JSON value of flag name (input, payload): the flag's
// text itself, or, for an input too big for a command line (the shell
// refuses a few MiB with "Argument list too long"), "@path" for a file's
// content or "-" for standard input's. It refuses a value that is not
// JSON, saying how to pass one; example is a JSON value that fits the flag.
func jsonFlag(env *Env, name, value, example string) (json.RawMessage, error) {
	var (
		data []byte
		err  error
	)
	switch {
	case value == "-":
		if env.Stdin == nil {
			return nil, usageErrorf("--%s - reads standard input, and there is none", name)
		}
		if data, err = io.ReadAll(env.Stdin); err != nil {
			return nil, fmt.Errorf("reading --%s from standard input: %w", name, err)
		}
	case strings.HasPrefix(value, "@"):
		if data, err = os.ReadFile(value[1:]); err != nil {
			return nil, withHint(usageErrorf("--%s %s: %v", name, value, err), fmt.Sprintf("pass @ and the path of a file holding a JSON value, e.g. --%s @%s.json", name, name))
		}
	default:
		data = []byte(value)
	}
	if !json.Valid(data) {
		where := ""
		if value == "-" || strings.HasPrefix(value, "@") {
			where = " (read from " + strings.TrimPrefix(value, "@") + ")"
		}
		return nil, withHint(usageErrorf("--%s is not valid JSON%s: %s", name, where, shorten(oneLine(string(data)), errorColumnWidth)),
			fmt.Sprintf(`pass a JSON value, quoted for the shell: --%s '%s', --%s '"text"' or --%s 42; or @file.json, or - for standard input`, name, example, name, name))
	}
	return data, nil
}
