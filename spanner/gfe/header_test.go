package gfe

import (
	"testing"
	"time"
)

func TestDurationReadsTheGFEMetricOnly(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   time.Duration
		ok     bool
	}{
		{"alone", []string{"gfet4t7; dur=123"}, 123 * time.Millisecond, true},
		{"a fraction", []string{"gfet4t7; dur=123.45"}, 123*time.Millisecond + 450*time.Microsecond, true},
		{"after another metric", []string{"afe; dur=45, gfet4t7; dur=7"}, 7 * time.Millisecond, true},
		{"before another metric", []string{"gfet4t7; dur=7, afe; dur=45"}, 7 * time.Millisecond, true},
		{"in a second value", []string{"afe; dur=45", "gfet4t7;dur=9"}, 9 * time.Millisecond, true},
		{"with other parameters", []string{"gfet4t7; desc=\"x\"; dur=2"}, 2 * time.Millisecond, true},
		{"zero", []string{"gfet4t7; dur=0"}, 0, true},
		{"absent", nil, 0, false},
		{"another metric only", []string{"afe; dur=45"}, 0, false},
		{"no duration", []string{"gfet4t7"}, 0, false},
		{"garbage duration", []string{"gfet4t7; dur=abc"}, 0, false},
		{"negative", []string{"gfet4t7; dur=-1"}, 0, false},
		{"not a number", []string{"gfet4t7; dur=NaN"}, 0, false},
		{"absurdly long", []string{"gfet4t7; dur=1e300"}, 0, false},
		{"a prefix of the name", []string{"gfet4t7x; dur=5"}, 0, false},
		// The W3C syntax: values may be quoted strings, which may hold the
		// separators; unknown parameters and metrics are skipped.
		{"a quoted duration", []string{`gfet4t7; dur="12.5"`}, 12500 * time.Microsecond, true},
		{"a description holding separators", []string{`afe; desc="a, b; gfet4t7; dur=9"; dur=1, gfet4t7; dur=3`}, 3 * time.Millisecond, true},
		{"its own description holding separators", []string{`gfet4t7; desc="x, y; dur=9"; dur=4`}, 4 * time.Millisecond, true},
		{"an escaped quote in a description", []string{`gfet4t7; desc="say \"hi\", dur=9"; dur=6`}, 6 * time.Millisecond, true},
		{"an unknown parameter before", []string{"gfet4t7; total; dur=8"}, 8 * time.Millisecond, true},
		{"no spaces", []string{"afe;dur=1,gfet4t7;dur=2"}, 2 * time.Millisecond, true},
		{"a parameter twice: the first counts", []string{"gfet4t7; dur=5; dur=7"}, 5 * time.Millisecond, true},
		{"a parameter twice, the first invalid", []string{"gfet4t7; dur=x; dur=7"}, 0, false},
		{"the metric twice: the first valid counts", []string{"gfet4t7, gfet4t7; dur=11"}, 11 * time.Millisecond, true},
		{"empty metrics", []string{", ,gfet4t7; dur=1,,"}, time.Millisecond, true},
		{"an unterminated quote", []string{`afe; desc="open, gfet4t7; dur=1`}, 0, false},
		{"a longer name", []string{"gfet4t7 junk; dur=2"}, 0, false},
	}
	for _, c := range cases {
		got, ok := Duration(c.values)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: Duration(%q) = %v, %v; want %v, %v", c.name, c.values, got, ok, c.want, c.ok)
		}
	}
}

func TestDurationDoesNotAllocate(t *testing.T) {
	values := []string{`afe; dur=45; desc="x, y", gfet4t7; dur="123.5"`}
	if n := testing.AllocsPerRun(100, func() { _, _ = Duration(values) }); n != 0 {
		t.Errorf("parsing a server-timing header allocated %v times per call; it runs once per RPC", n)
	}
}

// FuzzDuration: any header value is read without a panic, and a duration
// read is never negative nor over a day.
func FuzzDuration(f *testing.F) {
	for _, s := range []string{"gfet4t7; dur=1", `a; desc="\"`, "gfet4t7;dur=", ";;,,==\"", "gfet4t7; dur=1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := Duration([]string{s}); ok && (d < 0 || d > maxMillis*time.Millisecond) {
			t.Errorf("Duration(%q) = %v", s, d)
		}
	})
}
