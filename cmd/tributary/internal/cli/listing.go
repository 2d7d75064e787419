package cli

import (
	"fmt"
	"io"

	"github.com/google/uuid"
)

// defaultListLimit and maxListLimit bound the --limit of the list
// commands.
const (
	defaultListLimit = 50
	maxListLimit     = 1000
)

// checkLimit validates a list command's --limit.
func checkLimit(limit int) error {
	if limit < 1 || limit > maxListLimit {
		return withHint(usageErrorf("--limit must be from 1 to %d, not %d", maxListLimit, limit),
			fmt.Sprintf("pass --limit %d, or up to --limit %d and page with --after", defaultListLimit, maxListLimit))
	}
	return nil
}

// printListing prints a page of a list command without --json (which
// prints the API's listing): "no <noun>" or the table, and, when the page
// is full, a note on stderr saying how to see the next one. lastID is the
// id of the page's last item.
func printListing[T any](env *Env, items []T, limit int, noun string, lastID func(T) uuid.UUID, table func(w io.Writer) error) error {
	if len(items) == 0 {
		_, err := fmt.Fprintln(env.Stdout, "no "+noun)
		return err
	}
	if err := table(env.Stdout); err != nil {
		return err
	}
	if len(items) == limit {
		fmt.Fprintf(env.Stderr, "note: there may be more %s; see them with --after %s\n", noun, lastID(items[len(items)-1]))
	}
	return nil
}
