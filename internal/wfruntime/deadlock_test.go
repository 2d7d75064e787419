package wfruntime

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

func TestRetryDeadlock(t *testing.T) {
	t.Parallel()

	deadlock := fmt.Errorf("complete runs: %w", &pgconn.PgError{Code: deadlockDetected})
	other := errors.New("connection reset")
	for _, tc := range []struct {
		name      string
		errs      []error // what each call returns
		wantCalls int
		wantErr   error
	}{
		{"FirstTime", []error{nil}, 1, nil},
		{"AfterOneDeadlock", []error{deadlock, nil}, 2, nil},
		{"GivesUpAfterThree", []error{deadlock, deadlock, deadlock, nil}, 3, deadlock},
		{"OtherErrorsAtOnce", []error{other, nil}, 1, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			err := retryDeadlock(func() error {
				calls++
				return tc.errs[calls-1]
			})
			require.Equal(t, tc.wantCalls, calls)
			require.Equal(t, tc.wantErr, err)
		})
	}
}
