package workload

import (
	"math"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestDatasetBytesCountsWhatARowHolds: the estimate is the bytes of the
// values a preloaded row writes (YCSB's, counted from the row itself), and
// saturates instead of wrapping.
func TestDatasetBytesCountsWhatARowHolds(t *testing.T) {
	spec := func(typ v1alpha1.WorkloadType, rows int64, fieldBytes int32) *v1alpha1.WorkloadSpec {
		return &v1alpha1.WorkloadSpec{Type: typ, Dataset: v1alpha1.DatasetSpec{Rows: ptr.To(rows), FieldBytes: ptr.To(fieldBytes)}}
	}
	var ycsbRow int64
	for _, v := range (ycsbSchema{fieldBytes: 100}).values(YCSBKey(7), func(f int) string { return rowText(7, f, 100) }) {
		ycsbRow += int64(len(v.(string)))
	}
	for _, tc := range []struct {
		name string
		spec *v1alpha1.WorkloadSpec
		want int64
	}{
		{"YCSB, 1000 rows of 10 x 100 bytes", spec(v1alpha1.WorkloadYCSB, 1000, 100), 1000 * ycsbRow},
		{"Tweet, 1000 rows of 100-byte content", spec(v1alpha1.WorkloadTweet, 1000, 100),
			1000 * int64(len(tweetKey(7))+len(author(7))+100+4*8+8+len(tweetKey(7)))},
		{"no rows", spec(v1alpha1.WorkloadYCSB, 0, 100), 0},
		{"the API's largest dataset", spec(v1alpha1.WorkloadYCSB, 10_000_000_000, 1<<20), 10_000_000_000 * (19 + 10<<20)},
		{"more rows than int64 bytes", spec(v1alpha1.WorkloadYCSB, math.MaxInt64/2, 100), math.MaxInt64},
	} {
		got, err := DatasetBytes(tc.spec, "")
		if err != nil || got != tc.want {
			t.Errorf("%s: DatasetBytes = %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	if _, err := DatasetBytes(&v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB}, ""); err == nil {
		t.Errorf("an unresolved workload: no error")
	}
}

func TestTPCCDatasetBytesFollowTheScale(t *testing.T) {
	test := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadTPCC, TPCC: &v1alpha1.TPCCSpec{Population: v1alpha1.TPCCTest}}
	full := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadTPCC}
	*test, *full = test.Resolved(), full.Resolved()
	small, err := DatasetBytes(test, "")
	if err != nil {
		t.Fatal(err)
	}
	big, err := DatasetBytes(full, "")
	if err != nil {
		t.Fatal(err)
	}
	// A full warehouse is about 77 MB of rows (clause 4.2.2), the Test one
	// about a hundredth of it.
	if big < 60_000_000 || big > 90_000_000 || small*50 > big {
		t.Errorf("estimated bytes: one full warehouse %d, one Test warehouse %d", big, small)
	}
	full.TPCC.Warehouses = ptr.To[int32](v1alpha1.MaxTPCCWarehouses)
	if many, _ := DatasetBytes(full, ""); many < big*int64(v1alpha1.MaxTPCCWarehouses)*8/10 {
		t.Errorf("%d warehouses are %d bytes, want about %d times one's (items are shared)", v1alpha1.MaxTPCCWarehouses, many, v1alpha1.MaxTPCCWarehouses)
	}
}
