//go:build !linux

package workflow_test

// monotonicSeconds is 0 where the benchmarks do not read CLOCK_MONOTONIC.
func monotonicSeconds() float64 { return 0 }
