package result

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// regionSeedMonitoring is the single- vs multi-region seed's figures as
// the manager records them: the leader region's high-priority CPU, the
// commit p99, and a warm-up the server's signal ended.
func regionSeedMonitoring() *Monitoring {
	return &Monitoring{Version: MonitoringSchemaVersion, WindowStart: t0, WindowEnd: t0.Add(10 * time.Minute),
		MeasuredFrom: t0.Add(2 * time.Minute), AlignmentSeconds: 60,
		CPU: []MonitoringCPU{{Priority: "high", Location: "asia-northeast1", MeanRatio: 0.523, MaxRatio: 0.61},
			{Priority: "low", Location: "asia-northeast1", MeanRatio: 0.02, MaxRatio: 0.03}},
		Latency:  []MonitoringLatency{{Method: "Commit", Count: 60000, P50Seconds: 0.004, P99Seconds: 0.0125}},
		Requests: []MonitoringRequests{{Status: "OK", Count: 120000}, {Status: "ABORTED", Count: 12}},
		WarmUp:   &MonitoringWarmUp{Settled: true, SettledAt: t0.Add(2 * time.Minute), EndedBy: WarmUpEndedByServer},
		Notes:    []string{"cpu: 1 region"}}
}

// TestMonitoringSectionIsOptionalAndReadBack: a document without the
// section reads and prints as before; one with it round-trips and prints
// CPU by priority, latency per method, requests per status and which
// signal ended the warm-up.
func TestMonitoringSectionIsOptionalAndReadBack(t *testing.T) {
	d := docWithIntervals(t, "", []int{10, 10}, []int64{1000, 1000})
	var plain bytes.Buffer
	if err := WriteTable(&plain, d); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "cloud monitoring") {
		t.Errorf("a document without Cloud Monitoring figures prints their table:\n%s", plain.String())
	}
	if js, _ := json.Marshal(d); bytes.Contains(js, []byte(`"monitoring"`)) {
		t.Error("a document without Cloud Monitoring figures writes a monitoring field")
	}

	d.Monitoring = regionSeedMonitoring()
	js, _ := json.Marshal(d)
	back, err := Read(bytes.NewReader(js))
	if err != nil || back.Monitoring == nil || back.Monitoring.CPU[0].MeanRatio != 0.523 || back.Monitoring.WarmUp.EndedBy != WarmUpEndedByServer {
		t.Fatalf("the monitoring section did not round-trip (err %v): %+v", err, back.Monitoring)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, back); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"cloud monitoring (2026-11-21 00:02:00Z to 2026-11-21 00:10:00Z, 60s alignment)",
		"the Server signal ended the warm-up", "asia-northeast1", "52.3%", "61.0%", "Commit", "12.5ms", "ABORTED", "cloud monitoring note: cpu: 1 region"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	back.Monitoring.WarmUp.EndedBy = WarmUpEndedByClient
	b.Reset()
	_ = WriteTable(&b, back)
	if !strings.Contains(b.String(), "the Client signal ended the warm-up") {
		t.Errorf("a warm-up the client ended is not said:\n%s", b.String())
	}
}

// TestMonitoringSectionSurvivesReadingBackButNotAMerge: like the server
// section, a run's report read back keeps it; a merge of two documents
// drops it with a note.
func TestMonitoringSectionSurvivesReadingBackButNotAMerge(t *testing.T) {
	docs := shardDocs(t, testSpec(""), 2, 2, []sample{{0, 0, "read", 1000, 0}, {1, 0, "read", 1000, 0}})
	docs[0].Monitoring = regionSeedMonitoring()
	one, err := Merge(docs[0])
	if err != nil || one.Monitoring == nil {
		t.Fatalf("a report read back lost its monitoring section (err %v)", err)
	}
	two, err := Merge(docs...)
	if err != nil || two.Monitoring != nil || !strings.Contains(strings.Join(two.Notes, ";"), "Cloud Monitoring figures left out") {
		t.Fatalf("a merge of two documents kept a monitoring section (%v, err %v) or did not say it left it out: %q", two.Monitoring, err, two.Notes)
	}
}

func TestMonitoringSectionCheckRefusesWhatNoCollectionWrites(t *testing.T) {
	for name, mutate := range map[string]func(*Monitoring){
		"version":          func(m *Monitoring) { m.Version = "spanbench.io/server-metrics/v9" },
		"negative cpu":     func(m *Monitoring) { m.CPU[0].MeanRatio = -1 },
		"NaN p99":          func(m *Monitoring) { m.Latency[0].P99Seconds = nan() },
		"negative count":   func(m *Monitoring) { m.Requests[0].Count = -1 },
		"too many methods": func(m *Monitoring) { m.Latency = make([]MonitoringLatency, 33) },
		"overlong status":  func(m *Monitoring) { m.Requests[0].Status = strings.Repeat("x", 65) },
		"unknown signal":   func(m *Monitoring) { m.WarmUp.EndedBy = "Moon" },
		"overlong note":    func(m *Monitoring) { m.Notes = []string{strings.Repeat("n", 2000)} },
	} {
		m := regionSeedMonitoring()
		mutate(m)
		if err := m.Check(); err == nil {
			t.Errorf("%s: a monitoring section no collection writes was accepted", name)
		}
	}
	if err := regionSeedMonitoring().Check(); err != nil {
		t.Errorf("a valid monitoring section was refused: %v", err)
	}
}
