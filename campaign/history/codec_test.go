package history

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
	"testing"
)

func TestEntryRoundTrips(t *testing.T) {
	e := realisticEntry(t, 2, 2000, 0.5)
	b, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode of an encoded entry: %v", err)
	}
	want, _ := json.Marshal(e)
	back, _ := json.Marshal(got)
	if !bytes.Equal(want, back) {
		t.Errorf("round trip changed the entry:\n got %s\nwant %s", back[:200], want[:200])
	}
	if op, ok := got.Find("cell-3", "op-2"); !ok || op.Latency.Count != 2000 {
		t.Errorf("Find(cell-3, op-2) = %+v, %v; want the operation of 2000 values", op, ok)
	}
}

// TestEncodeDropsLargestHistogramsToFit: an entry above MaxEntryBytes
// keeps every figure and loses its largest histograms, counted.
func TestEncodeDropsLargestHistogramsToFit(t *testing.T) {
	// 64 cells × 6 operations × ~3.5 kB: about 1.3 MB of histograms.
	e := entryOf(t, 3, 64, 30_000, 1.0)
	b, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxEntryBytes {
		t.Fatalf("encoded entry %d B, above MaxEntryBytes %d", len(b), MaxEntryBytes)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, c := range got.Cells {
		for _, o := range c.Operations {
			if o.Latency.Count != 30_000 {
				t.Fatalf("cell %s op %s lost its figures: %+v", c.Name, o.Name, o.Latency)
			}
			if len(o.Histogram) > 0 {
				kept++
			}
		}
	}
	if got.HistogramsDropped == 0 || kept+got.HistogramsDropped != 64*6 {
		t.Errorf("kept %d histograms, dropped %d; want some dropped and %d in all", kept, got.HistogramsDropped, 64*6)
	}
}

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return buf.Bytes()
}

// TestDecodeRefusesMalformedEntriesSayingWhy: every kind of bad entry is
// an error naming the problem, never a panic.
func TestDecodeRefusesMalformedEntriesSayingWhy(t *testing.T) {
	good := realisticEntry(t, 4, 500, 0.5)
	mutate := func(f func(e *Entry)) []byte {
		e := realisticEntry(t, 4, 500, 0.5)
		f(&e)
		b, err := encode(&e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	goodJSON, _ := json.Marshal(good)
	bomb := gz(t, `{"schemaVersion":"`+strings.Repeat("a", maxDecodedBytes)+`"}`)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"too large", make([]byte, MaxEntryBytes+1), "more than the"},
		{"not gzip", []byte("{}"), "not gzip"},
		{"bomb", bomb, "decompresses to more than"},
		{"not JSON", gz(t, "cells: []"), "not valid JSON"},
		{"unknown field", gz(t, `{"schemaVersion":"`+SchemaVersion+`","extra":1}`), "unknown field"},
		{"trailing data", gz(t, string(goodJSON)+" {}"), "after its JSON"},
		{"other schema", mutate(func(e *Entry) { e.SchemaVersion = "v0" }), "schema"},
		{"no iteration", mutate(func(e *Entry) { e.Iteration = "" }), "iteration name"},
		{"too many cells", mutate(func(e *Entry) {
			for len(e.Cells) <= 64 {
				e.Cells = append(e.Cells, Cell{Name: "c", Runs: 1})
			}
		}), "cells, more than 64"},
		{"negative histograms dropped", mutate(func(e *Entry) { e.HistogramsDropped = -1 }), "histogramsDropped -1 is negative"},
		{"no cell name", mutate(func(e *Entry) { e.Cells[1].Name = "" }), `cell 1 (""): name of 0 bytes`},
		{"no runs", mutate(func(e *Entry) { e.Cells[1].Runs = 0 }), `cell 1 ("cell-1"): runs 0`},
		{"too many operations", mutate(func(e *Entry) {
			for len(e.Cells[0].Operations) <= 64 {
				e.Cells[0].Operations = append(e.Cells[0].Operations, e.Cells[0].Operations[0])
			}
		}), "operations, more than 64"},
		{"no operation name", mutate(func(e *Entry) { e.Cells[0].Operations[2].Name = "" }), `operation 2 (""): name of 0 bytes`},
		{"negative seconds", mutate(func(e *Entry) { e.Cells[0].Operations[2].Seconds = -1 }), `operation 2 ("op-2"): seconds -1`},
		{"decreasing percentiles", mutate(func(e *Entry) { e.Cells[0].Operations[0].Latency.P99 = 1 }), "do not decrease"},
		{"corrupt histogram", mutate(func(e *Entry) { e.Cells[2].Operations[1].Histogram[20] ^= 0xff }), `cell 2 ("cell-2"): operation 1 ("op-1"): decoding histogram`},
		{"histogram of another count", mutate(func(e *Entry) { e.Cells[0].Operations[0].Latency.Count = 7 }), "holds 500 values, its summary says 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// FuzzDecode: whatever the bytes, Decode returns an entry or an error,
// never panics, and what it accepts encodes and decodes again.
func FuzzDecode(f *testing.F) {
	b, err := Encode(realisticEntry(f, 5, 50, 0.5))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(gz(f, `{"schemaVersion":"`+SchemaVersion+`","iteration":"x","scheduledTime":"2026-01-01T00:00:00Z","cells":[]}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Encode(e)
		if err != nil {
			t.Fatalf("an accepted entry does not encode: %v", err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("an accepted entry, encoded again, is refused: %v", err)
		}
	})
}

// TestBoundKeepsTheNewestWithinCountAndBytes.
func TestBoundKeepsTheNewestWithinCountAndBytes(t *testing.T) {
	mib := 1 << 20
	for _, tc := range []struct {
		sizes []int
		limit int
		want  int
	}{
		{[]int{10, 10, 10}, 30, 3},
		{[]int{10, 10, 10}, 2, 2},
		{[]int{8 * mib, 8 * mib, 1}, 30, 2},
		// Once one does not fit, older ones go too, however small.
		{[]int{8 * mib, 7 * mib, 2 * mib, 1}, 30, 2},
		{nil, 30, 0},
	} {
		if got := Bound(tc.sizes, tc.limit); got != tc.want {
			t.Errorf("Bound(%v, %d) = %d, want %d", tc.sizes, tc.limit, got, tc.want)
		}
	}
}
