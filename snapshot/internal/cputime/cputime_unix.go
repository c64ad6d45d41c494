//go:build unix && !js

package cputime

import (
	"syscall"
	"time"
)

// Now returns the CPU time the process has used so far (getrusage: user
// and system), or the wall clock if it cannot be read.
func Now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
