package protocol

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// TestAShardReportPointsAtItsObjectOneWayOnly: a report's pointer
// round-trips; one with the result inline or chunked too is refused, as
// is a malformed pointer, naming the key.
func TestAShardReportPointsAtItsObjectOneWayOnly(t *testing.T) {
	p := &bucket.Pointer{Key: bucket.ShardKey("ns", "run", "uid", 2), Bytes: 12 << 20, SHA256: strings.Repeat("ab", 32)}
	m := EncodeShardReport(ShardReport{State: StateSucceeded, Object: p})
	got, err := DecodeShardReport(m.Data, m.BinaryData)
	if err != nil || got.Object == nil || *got.Object != *p {
		t.Fatalf("the pointer read back as %+v, %v; want %+v", got.Object, err, p)
	}
	if _, err := DecodeShardReport(m.Data, map[string][]byte{KeyResult: {1}}); err == nil || !strings.Contains(err.Error(), bucket.KeyObject) {
		t.Errorf("a report with a pointer and an inline result: %v; want a refusal naming %s", err, bucket.KeyObject)
	}
	for key, value := range map[string]string{bucket.KeyObjectBytes: "-1", bucket.KeyObjectSHA256: "xyz", bucket.KeyObject: ""} {
		bad := EncodeShardReport(ShardReport{State: StateSucceeded, Object: p})
		bad.Data[key] = value
		if _, err := DecodeShardReport(bad.Data, nil); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("a pointer with %s %q: %v; want a refusal naming it", key, value, err)
		}
	}
	head := &corev1.ConfigMap{Data: p.Data()}
	head.Name = "run-result"
	if _, err := LoadResult(context.Background(), nil, nil, head, KeyResult, ReportLimits()); err == nil || !strings.Contains(err.Error(), "--results-bucket") {
		t.Errorf("loading a pointed-at result with no bucket: %v; want an error naming --results-bucket", err)
	}
}
