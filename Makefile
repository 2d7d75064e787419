# Tributary's developer tasks. `make test` needs a Postgres: TEST_DATABASE_URL,
# a local server on 127.0.0.1:5432, or Postgres binaries to start a throw-away
# cluster from (see internal/testdb).

SHELL := bash
.SHELLFLAGS := -o pipefail -ec
GO ?= go

.PHONY: all bench demo test vet

all: vet test

# Benchmarks only, no tests.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# A local playground: example workflows and schedules, and the UI. Built
# first and run as itself, not by go run, which exits 1 when Ctrl-C stops
# the demo (make would then report the clean stop as an error).
demo:
	$(GO) build -o "$${TMPDIR:-/tmp}/tributary-demo" ./cmd/tributary
	exec "$${TMPDIR:-/tmp}/tributary-demo" demo

# Every package's tests with the race detector. The log shows each test's
# --- PASS/FAIL/SKIP line and each package's ok/FAIL line, and the full
# output of any package that failed; the exit status is go test's.
#
# Packages run one at a time (TEST_P, go test's -p); each package's tests
# still run in parallel. The packages share one Postgres server (100
# connections by default) and, on a small machine, its cores: side by
# side, the busiest moments of two packages met past the server's
# connections (SQLSTATE 53300) and slowed each other's timing. On a larger
# machine and server: make test TEST_P=4.
TEST_P ?= 1
test:
	$(GO) test -race -count=1 -p $(TEST_P) -json ./... 2>&1 | $(GO) run scripts/testfilter.go

# go vet, and gofmt that fails on unformatted files.
vet:
	$(GO) vet ./...
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files are not formatted; run gofmt -w on them:"; \
		echo "$$unformatted"; \
		exit 1; \
	fi
