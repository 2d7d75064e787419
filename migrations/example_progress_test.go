package migrations_test

import (
	"context"
	"fmt"

	"github.com/tributary-go/tributary/migrations"
)

// Example_progress follows a migration run through Config.Progress: each
// migration, River's and Tributary's, is reported as it starts and once it
// has committed, in the order Up runs them.
func Example_progress() {
	ctx := context.Background()

	dbPool, schema, dropSchema := exampleSchema(ctx) // an empty schema on the test server
	defer dropSchema()

	var riverDone int
	migrator, err := migrations.New(dbPool, &migrations.Config{
		Progress: func(p migrations.Progress) {
			switch {
			case p.River && p.Phase == migrations.PhaseDone:
				riverDone++
			case !p.River && p.Version == 1:
				fmt.Printf("%s %s %03d_%s\n", p.Direction, p.Phase, p.Version, p.Name)
			}
		},
		Schema: schema,
	})
	if err != nil {
		panic(err)
	}

	res, err := migrator.Up(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("each of River's migrations reported: %t\n", riverDone > 0 && riverDone == len(res.River))

	// Output:
	// up start 001_workflows
	// up done 001_workflows
	// each of River's migrations reported: true
}
