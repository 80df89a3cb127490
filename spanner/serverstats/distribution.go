package serverstats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/distribution"
)

// maxJSONBytes bounds one *_JSON_STRING value: a latency histogram of a
// few dozen buckets, or 20 lock samples, is a few kilobytes.
const maxJSONBytes = 64 << 10

// parseDistribution reads a LATENCY_DISTRIBUTION_JSON_STRING (or
// TOTAL_LATENCY_DISTRIBUTION_JSON_STRING) value: Spanner documents it as a
// JSON object with the fields of the LATENCY_DISTRIBUTION struct (COUNT,
// MEAN, SUM_OF_SQUARED_DEVIATION, NUM_FINITE_BUCKETS, GROWTH_FACTOR,
// SCALE, BUCKET_COUNTS: a Cloud Monitoring Distribution with exponential
// buckets, in seconds). Its exact spelling is not shown in the
// documentation, so field names are matched without case or underscores,
// numbers may be quoted (as protobuf's JSON writes 64-bit integers), and
// an array holding the one struct (the ARRAY<STRUCT> column's shape) is
// read as the struct.
func parseDistribution(s string) (*distribution.Distribution, error) {
	if len(s) > maxJSONBytes {
		return nil, fmt.Errorf("a distribution of %d bytes is more than %d", len(s), maxJSONBytes)
	}
	raw := bytes.TrimSpace([]byte(s))
	if len(raw) > 0 && raw[0] == '[' {
		var one []json.RawMessage
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, err
		}
		if len(one) != 1 {
			return nil, fmt.Errorf("a distribution array of %d elements, not 1", len(one))
		}
		raw = one[0]
	}
	fields, err := normalizedObject(raw)
	if err != nil {
		return nil, err
	}
	var f histogram
	if err := f.read(fields); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &distribution.Distribution{Count: f.count, Mean: f.mean, SumOfSquaredDeviation: f.ssqd, BucketCounts: f.buckets,
		BucketOptions: &distribution.Distribution_BucketOptions{Options: &distribution.Distribution_BucketOptions_ExponentialBuckets{
			ExponentialBuckets: &distribution.Distribution_BucketOptions_Exponential{
				NumFiniteBuckets: int32(f.finite), GrowthFactor: f.growth, Scale: f.scale}}}}, nil
}

// histogram is the LATENCY_DISTRIBUTION struct's fields.
type histogram struct {
	count, finite             int64
	mean, growth, scale, ssqd float64
	buckets                   []int64
}

func (f *histogram) read(fields map[string]json.RawMessage) error {
	for _, err := range []error{
		intField(fields, "count", &f.count), intField(fields, "numfinitebuckets", &f.finite),
		floatField(fields, "mean", &f.mean), floatField(fields, "growthfactor", &f.growth),
		floatField(fields, "scale", &f.scale), floatField(fields, "sumofsquareddeviation", &f.ssqd),
		intsField(fields, "bucketcounts", &f.buckets),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// check refuses a histogram whose buckets cannot be what it says.
func (f *histogram) check() error {
	if f.count < 0 || f.finite < 0 || f.finite > 4096 || !(f.growth > 1) || !(f.scale > 0) || math.IsInf(f.growth*f.scale, 0) {
		return errors.New("a distribution with a negative count or impossible exponential buckets")
	}
	if len(f.buckets) > int(f.finite)+2 {
		return fmt.Errorf("%d bucket counts for %d finite buckets", len(f.buckets), f.finite)
	}
	var sum int64
	for _, n := range f.buckets {
		if n < 0 {
			return errors.New("a negative bucket count")
		}
		sum += n
	}
	if len(f.buckets) > 0 && sum != f.count {
		return fmt.Errorf("bucket counts sum to %d, not the count %d", sum, f.count)
	}
	return nil
}

// normalizedObject is a JSON object's fields keyed by their lower-case
// names without underscores: COUNT, count; BUCKET_COUNTS, bucketCounts.
func normalizedObject(raw []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(obj))
	for k, v := range obj {
		out[strings.ReplaceAll(strings.ToLower(k), "_", "")] = v
	}
	return out, nil
}

// number reads a JSON number, quoted or not.
func number(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	return string(raw), nil
}

func intField(f map[string]json.RawMessage, name string, out *int64) error {
	raw, ok := f[name]
	if !ok {
		return nil // absent: the zero value, as protobuf's JSON omits it
	}
	s, err := number(raw)
	if err == nil {
		*out, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil {
		return fmt.Errorf("field %s: %w", name, err)
	}
	return nil
}

func floatField(f map[string]json.RawMessage, name string, out *float64) error {
	raw, ok := f[name]
	if !ok {
		return nil
	}
	s, err := number(raw)
	if err == nil {
		*out, err = strconv.ParseFloat(s, 64)
	}
	if err != nil || math.IsNaN(*out) || math.IsInf(*out, 0) {
		return fmt.Errorf("field %s is not a finite number", name)
	}
	return nil
}

func intsField(f map[string]json.RawMessage, name string, out *[]int64) error {
	raw, ok := f[name]
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("field %s: %w", name, err)
	}
	for _, it := range items {
		s, err := number(it)
		var n int64
		if err == nil {
			n, err = strconv.ParseInt(s, 10, 64)
		}
		if err != nil {
			return fmt.Errorf("field %s: %w", name, err)
		}
		*out = append(*out, n)
	}
	return nil
}
