package migrations_test

import (
	"context"
	"fmt"

	"github.com/tributary-go/tributary/migrations"
)

// Example_migrate migrates an empty schema up, which creates River's tables
// and then Tributary's, and shows that a second Up has nothing to do.
func Example_migrate() {
	ctx := context.Background()

	dbPool, schema, dropSchema := exampleSchema(ctx) // an empty schema on the test server
	defer dropSchema()

	migrator, err := migrations.New(dbPool, &migrations.Config{Schema: schema})
	if err != nil {
		panic(err)
	}

	res, err := migrator.Up(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("applied River's migrations: %t\n", len(res.River) > 0)
	fmt.Printf("applied %03d_%s first\n", res.Versions[0].Version, res.Versions[0].Name)

	res, err = migrator.Up(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("second Up applied %d migrations\n", len(res.River)+len(res.Versions))

	status, err := migrator.Status(ctx)
	if err != nil {
		panic(err)
	}
	latest := status.Versions[len(status.Versions)-1]
	fmt.Printf("up to date: %t\n", latest.Applied && latest.Version == migrations.Latest() && status.RiverVersion == status.RiverLatest)

	// Output:
	// applied River's migrations: true
	// applied 001_workflows first
	// second Up applied 0 migrations
	// up to date: true
}
