//go:build js

package cputime

import (
	"syscall/js"
	"time"
)

// Now returns the CPU time the process has used so far (Node's
// process.cpuUsage(): user and system), or the wall clock where there is
// no process (a browser).
func Now() time.Duration {
	p := js.Global().Get("process")
	if !p.Truthy() || p.Get("cpuUsage").Type() != js.TypeFunction {
		return time.Duration(time.Now().UnixNano())
	}
	u := p.Call("cpuUsage")
	return time.Duration(u.Get("user").Int()+u.Get("system").Int()) * time.Microsecond
}
