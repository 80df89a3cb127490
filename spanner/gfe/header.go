package gfe

import (
	"strconv"
	"strings"
	"time"
)

// The header's format and where it is documented:
//
//   - Spanner's page on latency points says every response (REST or gRPC)
//     carries a header with the time the request spent between the Google
//     Front End and Spanner: https://cloud.google.com/spanner/docs/latency-points
//   - Google's Go client for Spanner (cloud.google.com/go/spanner v1.96.1,
//     client.go) names the header server-timing and its metrics gfet4t7
//     (the GFE) and afe (the Spanner API frontend, sent only when asked
//     for), each with a dur parameter in milliseconds.
//   - The header's syntax is the W3C Server Timing header field:
//     https://w3c.github.io/server-timing/#the-server-timing-header-field —
//     comma-separated metrics, each a name followed by ;-separated
//     name=value parameters, a value being a token or a quoted string;
//     unknown parameters (and metrics) are ignored; a parameter given
//     twice counts the first time only, even if that one is invalid.
const (
	// HeaderKey is the response header (gRPC metadata key, lower case)
	// that carries the timings.
	HeaderKey = "server-timing"
	// metricName is the GFE's metric in the header.
	metricName = "gfet4t7"
	// durParam is the parameter holding a metric's duration in
	// milliseconds.
	durParam = "dur"
)

// Duration finds the GFE duration in the values of a server-timing
// header, such as `gfet4t7; dur=123, afe; dur=45`: dur is in
// milliseconds and may have a fraction. Other metrics, other parameters
// and quoted values (which may hold commas and semicolons) are skipped;
// the first gfet4t7 metric with a valid, non-negative duration counts.
// It reports false when there is none. It does not allocate: it runs once
// per RPC.
func Duration(values []string) (time.Duration, bool) {
	for _, v := range values {
		for p := (parser{s: v}); !p.done(); {
			if p.name() != metricName {
				p.skipMetric()
				continue
			}
			if d, ok := p.duration(); ok {
				return d, true
			}
		}
	}
	return 0, false
}

// parser reads a server-timing header value from its start.
type parser struct {
	s string
	i int
}

func (p *parser) done() bool { p.space(); return p.i >= len(p.s) }

func (p *parser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// name reads a metric's name: everything up to its first parameter or
// the next metric, trimmed (the W3C parsing algorithm's metric name).
func (p *parser) name() string {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ';' && p.s[p.i] != ',' {
		p.i++
	}
	return strings.TrimSpace(p.s[start:p.i])
}

// token reads a parameter's name or value up to a separator.
func (p *parser) token() string {
	p.space()
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(",;= \t\"", rune(p.s[p.i])) {
		p.i++
	}
	return p.s[start:p.i]
}

// value reads a parameter's value: a token, or a quoted string returned
// with its quotes.
func (p *parser) value() string {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return p.token()
	}
	start := p.i
	for p.i++; p.i < len(p.s) && p.s[p.i] != '"'; p.i++ {
		if p.s[p.i] == '\\' {
			p.i++
		}
	}
	p.i = min(p.i+1, len(p.s))
	return p.s[start:p.i]
}

// param reads the current metric's next parameter; more is false at the
// metric's end, with p after its comma.
func (p *parser) param() (name, val string, more bool) {
	for {
		p.space()
		if p.i >= len(p.s) {
			return "", "", false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			return "", "", false
		case ';':
			p.i++
			name = p.token()
			if p.space(); p.i < len(p.s) && p.s[p.i] == '=' {
				p.i++
				val = p.value()
			}
			return name, val, true
		default: // not the syntax: skip it, quotes and all
			if p.value() == "" {
				p.i++
			}
		}
	}
}

func (p *parser) skipMetric() {
	for _, _, more := p.param(); more; _, _, more = p.param() {
	}
}

// duration is the metric's first dur parameter, p left at the next
// metric.
func (p *parser) duration() (time.Duration, bool) {
	for name, val, more := p.param(); more; name, val, more = p.param() {
		if name == durParam {
			p.skipMetric()
			return millis(val)
		}
	}
	return 0, false
}

// millis is a dur value in milliseconds, quoted or not.
func millis(val string) (time.Duration, bool) {
	if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
		val = val[1 : len(val)-1]
	}
	ms, err := strconv.ParseFloat(val, 64)
	if err != nil || !(ms >= 0) || ms > maxMillis {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// maxMillis bounds a duration taken from a header (a day): a larger one is
// garbage, not a measurement, and would overflow a time.Duration sum.
const maxMillis = 24 * 3600 * 1000
