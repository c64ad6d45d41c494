//go:build !js

package snapshot_test

import "time"

// cpuNow is the wall clock where cpuNow's Node clock is missing.
func cpuNow() time.Duration { return time.Duration(time.Now().UnixNano()) }
