//go:build !unix

package schedule

import "time"

// cpuTime is not measured on this platform; the benchmark then omits cpu-%.
func cpuTime() time.Duration { return 0 }
