package migrations_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/migrations"
)

func TestParseMigrations(t *testing.T) {
	t.Parallel()

	file := func(sql string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(sql)} }
	valid := func() fstest.MapFS {
		return fstest.MapFS{
			"sql/001_first.up.sql":    file("CREATE TABLE /* TEMPLATE: schema */a (id int);"),
			"sql/001_first.down.sql":  file("DROP TABLE /* TEMPLATE: schema */a;"),
			"sql/002_second.up.sql":   file("CREATE TABLE /* TEMPLATE: schema */b (id int);"),
			"sql/002_second.down.sql": file("DROP TABLE /* TEMPLATE: schema */b;"),
		}
	}

	t.Run("DuplicateVersion", func(t *testing.T) {
		t.Parallel()

		fsys := valid()
		fsys["sql/002_other.up.sql"] = file("SELECT 1;")
		_, err := migrations.ParseMigrations(fsys, "sql")
		require.ErrorContains(t, err, "duplicate version 002")
	})

	t.Run("EmptyFile", func(t *testing.T) {
		t.Parallel()

		fsys := valid()
		fsys["sql/002_second.down.sql"] = file(" \n")
		_, err := migrations.ParseMigrations(fsys, "sql")
		require.ErrorContains(t, err, `file "002_second.down.sql" is empty`)
	})

	t.Run("Gap", func(t *testing.T) {
		t.Parallel()

		fsys := valid()
		fsys["sql/004_fourth.up.sql"] = file("SELECT 1;")
		fsys["sql/004_fourth.down.sql"] = file("SELECT 1;")
		_, err := migrations.ParseMigrations(fsys, "sql")
		require.ErrorContains(t, err, "version 003 is missing")
	})

	t.Run("MissingDown", func(t *testing.T) {
		t.Parallel()

		fsys := valid()
		delete(fsys, "sql/002_second.down.sql")
		_, err := migrations.ParseMigrations(fsys, "sql")
		require.ErrorContains(t, err, "002_second has an up file but no down file")
	})

	t.Run("MissingUp", func(t *testing.T) {
		t.Parallel()

		fsys := valid()
		delete(fsys, "sql/001_first.up.sql")
		_, err := migrations.ParseMigrations(fsys, "sql")
		require.ErrorContains(t, err, "001_first has a down file but no up file")
	})

	t.Run("NoFiles", func(t *testing.T) {
		t.Parallel()

		_, err := migrations.ParseMigrations(fstest.MapFS{"sql": &fstest.MapFile{Mode: 0o755 | 1<<31}}, "sql")
		require.ErrorContains(t, err, "no migration files")
	})

	t.Run("NotStartingAtOne", func(t *testing.T) {
		t.Parallel()

		fsys := valid()
		delete(fsys, "sql/001_first.up.sql")
		delete(fsys, "sql/001_first.down.sql")
		_, err := migrations.ParseMigrations(fsys, "sql")
		require.ErrorContains(t, err, "version 001 is missing")
	})

	t.Run("OtherTemplate", func(t *testing.T) {
		t.Parallel()

		fsys := valid()
		fsys["sql/002_second.up.sql"] = file("SELECT /* TEMPLATE: other */ 1;")
		_, err := migrations.ParseMigrations(fsys, "sql")
		require.ErrorContains(t, err, "uses a template other than")
	})

	t.Run("UnexpectedFileName", func(t *testing.T) {
		t.Parallel()

		for _, name := range []string{"003_third.sql", "3_third.up.sql", "003_Third.up.sql", "003_third.up.SQL", "README.md"} {
			fsys := valid()
			fsys["sql/"+name] = file("SELECT 1;")
			_, err := migrations.ParseMigrations(fsys, "sql")
			require.ErrorContains(t, err, "is not named NNN_name.up.sql", name)
		}
	})

	t.Run("Valid", func(t *testing.T) {
		t.Parallel()

		versions, err := migrations.ParseMigrations(valid(), "sql")
		require.NoError(t, err)
		require.Equal(t, []migrations.Version{{Name: "first", Version: 1}, {Name: "second", Version: 2}}, versions)
	})
}

func TestVersions(t *testing.T) {
	t.Parallel()

	versions := migrations.Versions()
	require.NotEmpty(t, versions)
	require.Equal(t, migrations.Version{Name: "workflows", Version: 1}, versions[0])
	require.Equal(t, len(versions), migrations.Latest())
	for i, version := range versions {
		require.Equal(t, i+1, version.Version)
	}
}
