package schedule_test

import (
	"fmt"
	"log"
	"time"

	"github.com/tributary-go/tributary/schedule"
)

// Example_next prints when a job at 02:30 every night in New York fires
// around the spring-forward day of 2026, when 02:30 does not exist.
func Example_next() {
	spec, err := schedule.ParseSpec("30 2 * * *", "America/New_York")
	if err != nil {
		log.Fatal(err)
	}

	after := time.Date(2026, 3, 6, 12, 0, 0, 0, spec.Location())
	for _, occurrence := range spec.NextN(after, 4) {
		fmt.Println(occurrence.At.Format(time.RFC3339))
		if occurrence.Shifted {
			fmt.Printf("  nominal %s: %s\n", occurrence.Nominal, occurrence.Note)
		}
	}

	// Output:
	// 2026-03-07T02:30:00-05:00
	// 2026-03-08T03:00:00-04:00
	//   nominal 2026-03-08T02:30:00: 02:30 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); runs at 03:00, right after the jump
	// 2026-03-09T02:30:00-04:00
	// 2026-03-10T02:30:00-04:00
}
