package serverstats

import (
	"strings"
	"testing"
)

// TestParseDistributionReadsTheDocumentedShapes: the JSON string column
// holds the LATENCY_DISTRIBUTION struct's fields; their spelling is not
// shown in Spanner's documentation, so upper case, camel case, quoted
// 64-bit integers and the one-element array are all read alike.
func TestParseDistributionReadsTheDocumentedShapes(t *testing.T) {
	for name, s := range map[string]string{
		"struct field names": `{"COUNT":3,"MEAN":0.003,"SUM_OF_SQUARED_DEVIATION":0,"NUM_FINITE_BUCKETS":10,` +
			`"GROWTH_FACTOR":2,"SCALE":0.001,"BUCKET_COUNTS":[0,1,2]}`,
		"protobuf JSON": `{"count":"3","mean":0.003,"numFiniteBuckets":"10","growthFactor":2,"scale":0.001,"bucketCounts":["0","1","2"]}`,
		"array of one":  `[{"count":3,"mean":0.003,"num_finite_buckets":10,"growth_factor":2,"scale":0.001,"bucket_counts":[0,1,2]}]`,
	} {
		d, err := parseDistribution(s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		e := d.GetBucketOptions().GetExponentialBuckets()
		if d.GetCount() != 3 || len(d.GetBucketCounts()) != 3 || e.GetNumFiniteBuckets() != 10 || e.GetGrowthFactor() != 2 || e.GetScale() != 0.001 {
			t.Errorf("%s: read %v", name, d)
		}
	}
}

// TestParseDistributionRefusesWhatCannotBeAHistogram: the column is input.
func TestParseDistributionRefusesWhatCannotBeAHistogram(t *testing.T) {
	const valid = `{"COUNT":2,"NUM_FINITE_BUCKETS":1,"GROWTH_FACTOR":2,"SCALE":1,"BUCKET_COUNTS":[1,1]}`
	for name, s := range map[string]string{
		"not JSON":             `{`,
		"negative count":       `{"COUNT":-1,"NUM_FINITE_BUCKETS":1,"GROWTH_FACTOR":2,"SCALE":1}`,
		"counts not the count": `{"COUNT":5,"NUM_FINITE_BUCKETS":1,"GROWTH_FACTOR":2,"SCALE":1,"BUCKET_COUNTS":[1,1]}`,
		"negative bucket":      `{"COUNT":0,"NUM_FINITE_BUCKETS":1,"GROWTH_FACTOR":2,"SCALE":1,"BUCKET_COUNTS":[1,-1]}`,
		"more buckets":         `{"COUNT":4,"NUM_FINITE_BUCKETS":1,"GROWTH_FACTOR":2,"SCALE":1,"BUCKET_COUNTS":[1,1,1,1]}`,
		"growth of 1":          `{"COUNT":1,"NUM_FINITE_BUCKETS":1,"GROWTH_FACTOR":1,"SCALE":1,"BUCKET_COUNTS":[1]}`,
		// Valid distributions but for what the case names, so that no other
		// check refuses them.
		"two structs": `[` + valid + `,` + valid + `]`,
		"too long":    valid[:len(valid)-1] + `,"x":"` + strings.Repeat("a", maxJSONBytes) + `"}`,
	} {
		if _, err := parseDistribution(s); err == nil {
			t.Errorf("%s: read as a histogram", name)
		}
	}
	for _, s := range []string{valid, `[` + valid + `]`, valid[:len(valid)-1] + `,"x":"` + strings.Repeat("a", 100) + `"}`} {
		if _, err := parseDistribution(s); err != nil {
			t.Errorf("%.80s: %v; want the valid distribution the cases bend read", s, err)
		}
	}
}

// TestParseLockSamplesReadsTheSampledRequests: SAMPLE_LOCK_REQUESTS in
// its JSON form, at most a bounded number of samples.
func TestParseLockSamplesReadsTheSampledRequests(t *testing.T) {
	got, err := parseLockSamples(`[{"column":"Users.name","lock_mode":"Exclusive","transaction_tag":"t"},` +
		`{"COLUMN":"Users._exists","LOCK_MODE":"ReaderShared","TRANSACTION_TAG":null}]`)
	if err != nil {
		t.Fatal(err)
	}
	want := []lockSample{{column: "Users.name", mode: "Exclusive", tag: "t"}, {column: "Users._exists", mode: "ReaderShared"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("samples = %+v, want %+v", got, want)
	}
	if _, err := parseLockSamples("[" + strings.Repeat(`{},`, maxLockSamples) + "{}]"); err == nil {
		t.Errorf("%d samples were read, want a refusal", maxLockSamples+1)
	}
}
