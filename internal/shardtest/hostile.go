package shardtest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// Case is one hostile shard result: what a pod running a user's image may
// write in its shard ConfigMap.
type Case struct {
	// Name says what is wrong with it.
	Name string
	// Result is the gzipped JSON, as the ConfigMap's result key holds it.
	Result []byte
}

// Hostile is the hostile shard classes, each as shard i of n of run would
// write it: a valid shard (Shard) bent one way. Every one must be refused
// (or, for the overflow pair, the second refused), never crash, hang or
// exhaust the reader's memory.
func Hostile(run string, w v1alpha1.WorkloadSpec, start time.Time, i, n int) []Case {
	valid := func() *result.Document { return Shard(run, w, start, i, n) }
	var cases []Case
	doc := func(name string, bend func(d *result.Document)) {
		d := valid()
		bend(d)
		cases = append(cases, Case{Name: name, Result: Gzip(d)})
	}
	doc("own Auto warm-up spec, interval index -1", func(d *result.Document) {
		auto := w
		auto.WarmUp = &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpAuto}
		auto = auto.Resolved()
		d.Spec, _ = protocol.RecordedSpec(&auto)
		d.Intervals[0].Index = -1
	})
	doc("interval index -1", func(d *result.Document) { d.Intervals[0].Index = -1 })
	doc("interval index 10^9", func(d *result.Document) { d.Intervals[len(d.Intervals)-1].Index = 1_000_000_000 })
	doc("count 2^63", func(d *result.Document) { d.Intervals[0].Operations[0].OK = 1 << 63 })
	doc("count 2^64-1", func(d *result.Document) { d.Intervals[0].Operations[0].Rows = math.MaxUint64 })
	doc("errors summing past int64", func(d *result.Document) {
		d.Intervals[0].Operations[0].Errors = map[string]uint64{"Unavailable": 1 << 62, "Aborted": 1 << 62, "Internal": 1 << 62}
	})
	doc("start in year 9999", func(d *result.Document) {
		span := d.End.Sub(d.Start)
		d.Start = time.Date(9999, 6, 1, 0, 0, 0, 0, time.UTC)
		d.End = d.Start.Add(span)
		d.Shards[0].Started, d.Shards[0].Ended = d.Start, d.End
	})
	doc("end before start", func(d *result.Document) { d.End = d.Start.Add(-time.Hour) })
	doc("other run's spec", func(d *result.Document) {
		other := w
		other.Interval = nil
		other = other.Resolved()
		d.Spec, _ = protocol.RecordedSpec(&other)
	})
	doc("another shard's index", func(d *result.Document) { d.Shards[0].Index = (i + 1) % (n + 1) })
	doc("two shard entries", func(d *result.Document) { d.Shards = append(d.Shards, d.Shards[0]) })
	doc("interval of 0 s", func(d *result.Document) { d.IntervalSeconds = 0 })
	doc("histogram holding more than its counts", func(d *result.Document) { d.Intervals[0].Operations[0].OK = 1 })
	doc("GFE histogram holding more than the successful operations", func(d *result.Document) {
		op := &d.Intervals[0].Operations[0]
		h := histogram.New()
		_ = h.RecordValues(1000, int64(op.OK)+1)
		op.GFELatencyHistogram, _ = histogram.Encode(h)
	})
	doc("counts without histograms", func(d *result.Document) {
		d.Intervals[0].Operations[0].OK = 1 << 40
		d.Intervals[0].Operations[0].Histograms = result.Histograms{}
	})
	doc("operation not in the spec", func(d *result.Document) { d.Intervals[0].Operations[0].Name = "drop-table" })
	doc("negative target rate", func(d *result.Document) { d.Intervals[0].TargetRate = -1 })
	doc("megabyte notes", func(d *result.Document) { d.Notes = []string{strings.Repeat("n", 1<<20)} })
	cases = append(cases,
		Case{Name: "gzip bomb of empty operations", Result: bomb(`{"name":"read"},`, 60<<20)},
		Case{Name: "gzip bomb of error maps", Result: bomb(`{"name":"read","errors":{"A":1,"B":2,"C":3}},`, 60<<20)},
		Case{Name: "not gzip", Result: []byte("spanbench")},
		Case{Name: "deep nesting", Result: gzipBytes([]byte(strings.Repeat("[", 100_000)))},
	)
	return cases
}

// FillBuckets gives every histogram of d every bucket of the shared range,
// 65,536 values each (past 16 bits: the compact form's largest), its
// counts to match: a small document whose histograms take hundreds of
// KiB each once decoded. Only a memory budget stops it.
func FillBuckets(d *result.Document) {
	full := fullHistogram()
	for k := range d.Intervals {
		for j := range d.Intervals[k].Operations {
			op := &d.Intervals[k].Operations[j]
			op.OK, op.Errors, op.NotFound = uint64(full.count), nil, 0
			op.LatencyHistogram, op.ServiceHistogram, op.ErrorLatencyHistogram = full.encoded, full.encoded, ""
		}
	}
}

// Gzip is d as gzipped JSON, whatever its size (EncodeResult would
// coarsen or refuse it).
func Gzip(d *result.Document) []byte {
	js, err := json.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("marshalling a document: %v", err))
	}
	return gzipBytes(js)
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// bomb is a gzipped document whose one interval repeats element until the
// JSON is size bytes: small compressed, huge decompressed, and made of
// small objects that decode into far more memory than their bytes.
func bomb(element string, size int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write([]byte(`{"schemaVersion":"` + result.SchemaVersion + `","run":"bomb","intervals":[{"index":0,"operations":[`))
	chunk := []byte(strings.Repeat(element, 64<<10/len(element)))
	for written := 0; written < size; written += len(chunk) {
		_, _ = zw.Write(chunk)
	}
	_, _ = zw.Write([]byte(`{"name":"read"}]}]}`))
	_ = zw.Close()
	return buf.Bytes()
}

// full is a histogram with every bucket of the shared range populated.
type full struct {
	encoded string
	count   int64
}

func fullHistogram() full {
	h := histogram.New()
	for v := int64(histogram.LowestMicros); v <= histogram.HighestMicros; {
		_ = h.RecordValues(v, 1<<16)
		// The next bucket: 1 µs wide below 2048, then 1/1024 of an octave.
		v += max(1, int64(1)<<max(0, bits.Len64(uint64(v))-11))
	}
	return full{encoded: mustEncode(h), count: h.TotalCount()}
}

func mustEncode(h *hdr.Histogram) string {
	s, err := histogram.Encode(h)
	if err != nil {
		panic(fmt.Sprintf("encoding a histogram: %v", err))
	}
	return s
}

// Instant makes d a shard that measured ok reads of 1 ms (its first
// operation, alone) in one nanosecond: valid, yet its throughput (1e9 × ok per second) is far past
// what the status's 24-character figure can hold unless it is clamped.
func Instant(d *result.Document, ok uint64) {
	d.End = d.Start.Add(time.Nanosecond)
	d.Shards[0].Started, d.Shards[0].Ended = d.Start, d.End
	d.Intervals = d.Intervals[:1]
	d.Intervals[0].Operations = d.Intervals[0].Operations[:1]
	lat := histogram.New()
	_ = lat.RecordValues(1000, int64(ok))
	enc := mustEncode(lat)
	op := &d.Intervals[0].Operations[0]
	op.OK, op.Rows, op.Errors, op.NotFound = ok, ok, nil, 0
	op.LatencyHistogram, op.ServiceHistogram, op.ErrorLatencyHistogram = enc, enc, ""
}
