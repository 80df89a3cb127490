package pod

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

func goodControl() Control {
	return Control{Run: "r", Namespace: "ns", Shards: 3, Region: "asia-northeast1",
		Workload: ycsb(1000, time.Minute, readOp, updateOp),
		Target:   v1alpha1.TargetSpec{Project: "spanbench-test", Instance: v1alpha1.InstanceSpec{Name: "test"}, Database: "bench"}}
}

func TestDecodeControlReadsWhatTheControllerWrites(t *testing.T) {
	want := goodControl()
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeControl(b)
	if err != nil {
		t.Fatalf("DecodeControl of a good document: %v", err)
	}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Fatalf("decoded control differs (-want +got):\n%s", diff)
	}
}

func TestDecodeControlRefusesBadInputNamingTheProblem(t *testing.T) {
	good, err := json.Marshal(goodControl())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) string { return strings.Replace(string(good), old, new, 1) }
	cases := map[string]struct{ doc, want string }{
		"empty":          {"", "unexpected end of JSON input"},
		"trailing data":  {string(good) + "{}", "after top-level value"},
		"unknown field":  {edit(`"Shards"`, `"Shard":1,"Shards"`), `unknown field "Shard"`},
		"duplicate":      {edit(`"Shards":3`, `"Shards":3,"Shards":4`), `duplicate field "Shards"`},
		"wrong type":     {edit(`"Shards":3`, `"Shards":"3"`), "Shards"},
		"no run":         {edit(`"Run":"r"`, `"Run":""`), "Run: Required value"},
		"no shards":      {edit(`"Shards":3`, `"Shards":0`), "Shards: Invalid value: 0"},
		"many loaders":   {edit(`"loaderPods":1`, `"loaderPods":101`), "Workload.dataset.loaderPods: Invalid value: 101"},
		"bad target":     {edit(`"project":"spanbench-test"`, `"project":"X"`), "Target.project"},
		"bad workload":   {edit(`"weight":3`, `"weight":-3`), "Workload.operations[0].weight"},
		"case-different": {edit(`"Run"`, `"run"`), `unknown field "run"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeControl([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeControl returned %v; want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestSliceBoundsCoverEveryKeyOnce(t *testing.T) {
	for _, rows := range []int64{0, 1, 2, 7, 1001, 40_000_000, 1 << 62} {
		for _, n := range []int{1, 2, 3, 7, 1000} {
			var next int64
			for i := range n {
				from, to := SliceBounds(rows, i, n)
				if from != next || to < from {
					t.Fatalf("rows %d, shards %d: shard %d gets [%d, %d); want it to start at %d", rows, n, i, from, to, next)
				}
				if size := to - from; size < rows/int64(n) || size > rows/int64(n)+1 {
					t.Fatalf("rows %d, shards %d: shard %d gets %d rows; want %d or one more", rows, n, i, size, rows/int64(n))
				}
				next = to
			}
			if next != rows {
				t.Fatalf("rows %d, shards %d: the slices end at %d", rows, n, next)
			}
		}
	}
}

func TestSeedIsStablePerRunAndShard(t *testing.T) {
	if a, b := Seed("r", 0), Seed("r", 0); a != b {
		t.Fatal("Seed is not deterministic")
	}
	seen := map[int64]string{}
	for _, k := range []struct {
		run   string
		index int
	}{{"r", 0}, {"r", 1}, {"s", 0}, {"r1", 1}, {"r", 11}} {
		s := Seed(k.run, k.index)
		if prev, ok := seen[s]; ok {
			t.Fatalf("Seed(%q, %d) equals the seed of %s", k.run, k.index, prev)
		}
		seen[s] = k.run
	}
}

func TestTruncateKeepsValidUTF8(t *testing.T) {
	s := strings.Repeat("é", 100) // 2 bytes each
	got := truncate(s, 51)
	if len(got) > 51 || !strings.HasSuffix(got, "...") || !strings.HasPrefix(s, strings.TrimSuffix(got, "...")) {
		t.Fatalf("truncate to 51 bytes gave %q (%d bytes)", got, len(got))
	}
	if truncate("short", 51) != "short" {
		t.Fatal("truncate changed a short message")
	}
}

func TestProtocolNamesFitAtTheRunNameLimit(t *testing.T) {
	if got := ShardConfigMapName("tokyo", 12); got != "tokyo-shard-12" {
		t.Errorf("ShardConfigMapName = %q, want tokyo-shard-12", got)
	}
	run := strings.Repeat("a", v1alpha1.MaxRunNameLength)
	for _, name := range []string{ShardConfigMapName(run, 999), LoaderConfigMapName(run, 99), ControlConfigMapName(run)} {
		if len(name) > 63 {
			t.Errorf("%s is %d characters for a run named at the limit, over 63", name, len(name))
		}
	}
}
