package engine_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
)

func TestTransient(t *testing.T) {
	t.Parallel()

	for err, want := range map[error]bool{
		nil:                                                       false,
		&pgconn.PgError{Code: "57P01"}:                            true, // terminated by pg_terminate_backend
		&pgconn.PgError{Code: "57P03"}:                            true, // the server is starting
		&pgconn.PgError{Code: "08006"}:                            true, // connection failure
		&pgconn.PgError{Code: "23505"}:                            false,
		&pgconn.PgError{Code: "42P01"}:                            false, // no such table: the statement's fault
		fmt.Errorf("read: %w", io.EOF):                            true,
		errors.New("conn closed"):                                 true,
		errors.New("invalid input syntax"):                        false,
		fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "57P01"}): true,
	} {
		require.Equal(t, want, engine.Transient(err), "%v", err)
	}
}
