//go:build js

package snapshot_test

import (
	"syscall/js"
	"time"
)

// cpuNow returns the process's CPU time so far (Node's
// process.cpuUsage(): user and system), for benchmarks run in
// WebAssembly on a loaded machine, where wall time says less.
func cpuNow() time.Duration {
	u := js.Global().Get("process").Call("cpuUsage")
	return time.Duration(u.Get("user").Int()+u.Get("system").Int()) * time.Microsecond
}
