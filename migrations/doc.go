// Package migrations creates and upgrades the Postgres tables Tributary runs
// on: River's (through River's own rivermigrate) and then Tributary's.
//
// Tributary's migrations are numbered SQL files embedded in this package,
// 001_workflows.up.sql with 001_workflows.down.sql and so on. Migrate once
// when a service starts, or with `tributary migrate up`:
//
//	migrator, err := migrations.New(dbPool, &migrations.Config{Schema: "tributary"})
//	if err != nil {
//		// handle error
//	}
//	res, err := migrator.Up(ctx)
//	if err != nil {
//		// handle error
//	}
//	for _, version := range res.Versions {
//		log.Printf("applied %03d_%s in %s", version.Version, version.Name, version.Duration)
//	}
//
// # Guarantees
//
//   - Up is safe to call from many processes at once. Callers for the same
//     schema take turns on a Postgres advisory lock: the first applies what
//     is missing, the others then find nothing left to do.
//   - Each migration is applied in its own transaction together with its row
//     in the tributary_migration table: a migration is either fully applied
//     and recorded, or not at all.
//   - Down only removes Tributary's tables, unless DownOpts.IncludeRiver asks
//     for River's too. Down removes data: it is for development and for
//     undoing an upgrade, not for routine use.
//
// Config.Progress hears of each migration, River's included, as it starts
// and as it commits, for a progress display (`tributary migrate` prints its
// lines from it). Migrator.Status reports which versions a database has,
// and Versions and Latest what this build of Tributary knows.
// Migrator.PlanDown says, before a Down, what it would roll back and how
// many rows the tables it would drop hold, for an operator to confirm
// (`tributary migrate down` asks with it).
package migrations
