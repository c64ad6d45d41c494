//go:build !js

package load

import "time"

// cpuNow is the wall clock where cpuNow's Node clock is missing: the
// benchmarks that use it run in WebAssembly under Node.
func cpuNow() time.Duration { return time.Duration(time.Now().UnixNano()) }
