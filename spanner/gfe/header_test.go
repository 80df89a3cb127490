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
	}
	for _, c := range cases {
		got, ok := Duration(c.values)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: Duration(%q) = %v, %v; want %v, %v", c.name, c.values, got, ok, c.want, c.ok)
		}
	}
}

func TestDurationDoesNotAllocate(t *testing.T) {
	values := []string{"afe; dur=45, gfet4t7; dur=123.5"}
	if n := testing.AllocsPerRun(100, func() { _, _ = Duration(values) }); n != 0 {
		t.Errorf("parsing a server-timing header allocated %v times per call; it runs once per RPC", n)
	}
}
