package migrations

import (
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
)

// LockKey exposes lockKey to tests.
var LockKey = lockKey

// NewWithFS is like New with the migrations read from dir of fsys instead
// of the embedded ones.
func NewWithFS(pool *pgxpool.Pool, config *Config, fsys fs.FS, dir string) (*Migrator, error) {
	set, err := parseMigrations(fsys, dir)
	if err != nil {
		return nil, err
	}
	return newMigrator(pool, config, set)
}

// ParseMigrations runs the validator of embedded migration files on fsys.
func ParseMigrations(fsys fs.FS, dir string) ([]Version, error) {
	set, err := parseMigrations(fsys, dir)
	if err != nil {
		return nil, err
	}
	return versionsOf(set), nil
}
