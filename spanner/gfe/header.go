package gfe

import (
	"strconv"
	"strings"
	"time"
)

// HeaderKey is the response header (gRPC metadata key, lower case) that
// carries the timings.
const HeaderKey = "server-timing"

// metricName is the GFE's metric in the header.
const metricName = "gfet4t7"

// Duration finds the GFE duration in the values of a server-timing
// header: comma-separated metrics, each a name followed by ;-separated
// parameters, such as `gfet4t7; dur=123, afe; dur=45`. dur is in
// milliseconds and may have a fraction. It reports false when no value
// names the GFE metric with a valid, non-negative duration. It does not
// allocate: it runs once per RPC.
func Duration(values []string) (time.Duration, bool) {
	for _, v := range values {
		for v != "" {
			var metric string
			metric, v, _ = strings.Cut(v, ",")
			if d, ok := metricDuration(metric); ok {
				return d, true
			}
		}
	}
	return 0, false
}

// metricDuration is the dur parameter of metric when metric is the GFE's.
func metricDuration(metric string) (time.Duration, bool) {
	name, params, _ := strings.Cut(metric, ";")
	if strings.TrimSpace(name) != metricName {
		return 0, false
	}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		key, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || strings.TrimSpace(key) != "dur" {
			continue
		}
		ms, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || !(ms >= 0) || ms > maxMillis {
			return 0, false
		}
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	return 0, false
}

// maxMillis bounds a duration taken from a header (a day): a larger one is
// garbage, not a measurement, and would overflow a time.Duration sum.
const maxMillis = 24 * 3600 * 1000
