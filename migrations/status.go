package migrations

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// Status is the migration state of a database.
type Status struct {
	// RiverLatest is the newest River migration version this build knows.
	RiverLatest int

	// RiverVersion is the newest River migration applied to the database; 0
	// when River's tables are absent.
	RiverVersion int

	// Versions lists every Tributary migration this build knows, oldest
	// first, plus any newer one the database has from a newer build.
	Versions []VersionStatus
}

// VersionStatus is the state of one Tributary migration in a database.
type VersionStatus struct {
	// Applied is whether the database has the migration.
	Applied bool

	// AppliedAt is when the migration was applied; zero when it wasn't.
	AppliedAt time.Time

	// Name is the migration's name, such as "workflows".
	Name string

	// Version is the migration's number.
	Version int
}

// Status reports which of Tributary's migrations the database has, and
// River's current version. It takes no lock and changes nothing.
func (m *Migrator) Status(ctx context.Context) (*Status, error) {
	conn, err := m.checkedConn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()

	rows, err := m.appliedRows(ctx, conn.Conn())
	if err != nil {
		return nil, err
	}

	status := &Status{}
	for _, mig := range m.migrations {
		versionStatus := VersionStatus{Name: mig.Name, Version: mig.Version}
		if row, ok := rows[mig.Version]; ok {
			versionStatus.Applied = true
			versionStatus.AppliedAt = row.AppliedAt
			delete(rows, mig.Version)
		}
		status.Versions = append(status.Versions, versionStatus)
	}
	for _, row := range rows { // applied by a newer build
		status.Versions = append(status.Versions, row)
	}
	slices.SortFunc(status.Versions, func(a, b VersionStatus) int { return a.Version - b.Version })

	riverVersions, err := m.river.ExistingVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: reading River's migrations: %w", err)
	}
	for _, version := range riverVersions {
		status.RiverVersion = max(status.RiverVersion, version.Version)
	}
	for _, version := range m.river.AllVersions() {
		status.RiverLatest = max(status.RiverLatest, version.Version)
	}
	return status, nil
}

// appliedRows reads the tributary_migration table, which may not exist yet.
func (m *Migrator) appliedRows(ctx context.Context, conn *pgx.Conn) (map[int]VersionStatus, error) {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", m.prefix+"tributary_migration").Scan(&exists); err != nil {
		return nil, fmt.Errorf("migrations: looking for tributary_migration: %w", err)
	}
	if !exists {
		return map[int]VersionStatus{}, nil
	}

	rows, err := conn.Query(ctx, "SELECT version, name, applied_at FROM "+m.prefix+"tributary_migration")
	if err != nil {
		return nil, fmt.Errorf("migrations: reading tributary_migration: %w", err)
	}
	applied := make(map[int]VersionStatus)
	var row VersionStatus
	_, err = pgx.ForEachRow(rows, []any{&row.Version, &row.Name, &row.AppliedAt}, func() error {
		row.Applied = true
		applied[row.Version] = row
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("migrations: reading tributary_migration: %w", err)
	}
	return applied, nil
}
