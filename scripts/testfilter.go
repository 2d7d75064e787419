//go:build ignore

// Testfilter turns `go test -json` into a short log: each test's
// --- PASS/FAIL/SKIP line (a skip with its reason) and each package's
// ok/FAIL line, plus the full output of every package that failed and
// everything the build printed.
// It exits 1 when anything failed.
//
//	go test -json ./... 2>&1 | go run scripts/testfilter.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// event is a test2json TestEvent or a build BuildEvent.
type event struct {
	Action  string
	Output  string
	Package string
	Test    string
}

func main() {
	var (
		failed  []string
		counts  = map[string]int{}
		output  = make(map[string]*strings.Builder) // per package, all output
		scanner = bufio.NewScanner(os.Stdin)
		summary = make(map[string]string) // per package, its ok/FAIL line
		logs    = make(map[string]string) // per test, what it logged (a skip's reason)
	)
	scanner.Buffer(make([]byte, 1024*1024), 64*1024*1024)

	for scanner.Scan() {
		line := scanner.Text()
		var ev event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &ev) != nil {
			fmt.Println(line) // an early error from the go command
			continue
		}

		switch ev.Action {
		case "build-output":
			fmt.Print(ev.Output) // the package's fail event follows
		case "output":
			if output[ev.Package] == nil {
				output[ev.Package] = &strings.Builder{}
			}
			output[ev.Package].WriteString(ev.Output)

			trimmed := strings.TrimSpace(ev.Output)
			if ev.Test != "" && !strings.HasPrefix(trimmed, "=== ") && !strings.HasPrefix(trimmed, "--- ") {
				logs[ev.Package+" "+ev.Test] += ev.Output
			}
			switch {
			case ev.Test != "" && (strings.HasPrefix(trimmed, "--- PASS") ||
				strings.HasPrefix(trimmed, "--- FAIL") || strings.HasPrefix(trimmed, "--- SKIP")):
				fmt.Print(ev.Output)
			case ev.Test == "" && (strings.HasPrefix(trimmed, "ok") || strings.HasPrefix(trimmed, "FAIL\t") ||
				strings.HasPrefix(trimmed, "?")):
				summary[ev.Package] = ev.Output
			}
		case "pass", "skip":
			if ev.Test != "" {
				counts[ev.Action]++
				if ev.Action == "skip" {
					fmt.Print(logs[ev.Package+" "+ev.Test])
				}
				delete(logs, ev.Package+" "+ev.Test)
			}
			if ev.Test == "" {
				fmt.Print(summary[ev.Package])
			}
		case "fail":
			if ev.Test != "" {
				delete(logs, ev.Package+" "+ev.Test)
				counts["fail"]++
				continue
			}
			failed = append(failed, ev.Package)
			fmt.Printf("\n===== full output of failed package %s =====\n", ev.Package)
			if out := output[ev.Package]; out != nil {
				fmt.Print(out.String())
			}
			if summary[ev.Package] == "" {
				fmt.Printf("FAIL\t%s\n", ev.Package)
			}
			fmt.Printf("===== end of %s =====\n\n", ev.Package)
		}
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testfilter:", err)
		os.Exit(1)
	}

	// The closing line CI reads: how many tests (and subtests) ran.
	closing := fmt.Sprintf("tests: %d passed, %d failed, %d skipped", counts["pass"], counts["fail"], counts["skip"])
	if len(failed) > 0 {
		fmt.Printf("\nFAILED: %s\n%s\n", strings.Join(failed, ", "), closing)
		os.Exit(1)
	}
	fmt.Printf("\nPASS: all packages\n%s\n", closing)
}
