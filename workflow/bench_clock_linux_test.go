package workflow_test

import (
	"syscall"
	"unsafe"
)

// monotonicSeconds reads CLOCK_MONOTONIC, the clock perf record -k
// CLOCK_MONOTONIC stamps its samples with (see benchPerfWindow).
func monotonicSeconds() float64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}
