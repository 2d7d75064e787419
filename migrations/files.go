package migrations

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// schemaPlaceholder marks where a migration's SQL names a table. It is
// replaced by the quoted target schema and a dot, or removed when the target
// is the connection's search_path. River's migrations use the same marker.
const schemaPlaceholder = "/* TEMPLATE: schema */"

//go:embed sql/*.sql
var sqlFS embed.FS

// embedded is Tributary's migrations, checked when the package loads: a
// malformed set is a bug in this module, not something a user can fix.
var embedded = mustParseMigrations(sqlFS, "sql")

// migration is one numbered migration with the SQL of both directions.
type migration struct {
	Name    string
	SQLDown string
	SQLUp   string
	Version int
}

// Version is one of Tributary's migrations.
type Version struct {
	// Name is the migration's name, from its file name: "workflows" for
	// 001_workflows.up.sql.
	Name string

	// Version is the migration's number, from 1 up without gaps.
	Version int
}

// Latest returns the newest migration version this build of Tributary
// knows.
func Latest() int { return embedded[len(embedded)-1].Version }

// Versions returns every migration this build of Tributary knows, oldest
// first.
func Versions() []Version { return versionsOf(embedded) }

func versionsOf(set []migration) []Version {
	versions := make([]Version, len(set))
	for i, mig := range set {
		versions[i] = Version{Name: mig.Name, Version: mig.Version}
	}
	return versions
}

func mustParseMigrations(fsys fs.FS, dir string) []migration {
	set, err := parseMigrations(fsys, dir)
	if err != nil {
		panic(err)
	}
	return set
}

var fileNameRE = regexp.MustCompile(`^(\d{3,})_([a-z0-9_]+)\.(up|down)\.sql$`)

// parseMigrations reads NNN_name.up.sql and NNN_name.down.sql files from dir
// and checks that they form a valid set: versions 1 to N without gaps or
// duplicates, each with an up and a down file, both non-empty, using no
// template other than the schema placeholder.
func parseMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: reading %s: %w", dir, err)
	}

	byVersion := make(map[int]*migration)
	for _, entry := range entries {
		if entry.IsDir() {
			continue
		}
		fileName := entry.Name()
		match := fileNameRE.FindStringSubmatch(fileName)
		if match == nil {
			return nil, fmt.Errorf("migrations: file %q is not named NNN_name.up.sql or NNN_name.down.sql", fileName)
		}
		version, err := strconv.Atoi(match[1])
		if err != nil || version < 1 {
			return nil, fmt.Errorf("migrations: file %q: version must be a number from 001 up", fileName)
		}
		name, direction := match[2], match[3]

		data, err := fs.ReadFile(fsys, path.Join(dir, fileName))
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		sql := string(data)
		if strings.TrimSpace(sql) == "" {
			return nil, fmt.Errorf("migrations: file %q is empty", fileName)
		}
		if rest := strings.ReplaceAll(sql, schemaPlaceholder, ""); strings.Contains(rest, "/* TEMPLATE") {
			return nil, fmt.Errorf("migrations: file %q uses a template other than %q", fileName, schemaPlaceholder)
		}

		mig := byVersion[version]
		if mig == nil {
			mig = &migration{Name: name, Version: version}
			byVersion[version] = mig
		}
		if mig.Name != name {
			return nil, fmt.Errorf("migrations: duplicate version %03d: %03d_%s and %03d_%s", version, version, mig.Name, version, name)
		}
		target := &mig.SQLUp
		if direction == "down" {
			target = &mig.SQLDown
		}
		if *target != "" {
			return nil, fmt.Errorf("migrations: duplicate file for %03d_%s.%s.sql", version, name, direction)
		}
		*target = sql
	}

	if len(byVersion) == 0 {
		return nil, errors.New("migrations: no migration files in " + dir)
	}

	set := make([]migration, 0, len(byVersion))
	for _, mig := range byVersion {
		set = append(set, *mig)
	}
	slices.SortFunc(set, func(a, b migration) int { return a.Version - b.Version })

	for i, mig := range set {
		if mig.Version != i+1 {
			return nil, fmt.Errorf("migrations: version %03d is missing (found %03d_%s after it)", i+1, mig.Version, mig.Name)
		}
		if mig.SQLUp == "" {
			return nil, fmt.Errorf("migrations: %03d_%s has a down file but no up file", mig.Version, mig.Name)
		}
		if mig.SQLDown == "" {
			return nil, fmt.Errorf("migrations: %03d_%s has an up file but no down file", mig.Version, mig.Name)
		}
	}
	return set, nil
}
