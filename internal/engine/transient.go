package engine

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Transient reports whether err is the loss of a connection or of the
// server rather than the statement's fault: a terminated backend
// (pg_terminate_backend, a proxy, a pooler), a server shutting down,
// crashing or starting, a broken socket, a connection that never sent the
// statement. A read that failed so may be run again on a new connection
// of the pool; a write only when the caller knows it did not commit.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P01-57P03: admin shutdown,
		// crash shutdown, cannot connect now.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var netErr net.Error
	return pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &netErr) || strings.Contains(err.Error(), "conn closed")
}
