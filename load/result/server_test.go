package result

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func f64(v float64) *float64 { return &v }

// seedServer is the READ-vs-SQL seed's key-list read over 4 splits as the
// manager records it, and an update Spanner's TOP tables did not keep.
func seedServer() *Server {
	return &Server{Version: ServerSchemaVersion, Source: "SPANNER_SYS.", Minutes: []time.Time{t0.Add(time.Minute)},
		ApportionedOps: 12, Operations: []ServerOperation{
			{Name: "read", ClientOps: 111474, Statements: &ServerStatements{Minutes: 1, Coverage: 1, ClientOps: 111474,
				Executions: 445896, ExecutionsPerOp: f64(4), CPUSecondsPerExecution: f64(0.000141), CPUSecondsPerOp: f64(0.000564),
				RowsPerOp: f64(10), BytesPerOp: f64(10429)}},
			{Name: "update", ClientOps: 1000, NotCaptured: []string{`transaction tag "t": no row in TXN_STATS_TOP_MINUTE`}},
		}}
}

// TestServerSectionIsOptionalAndReadBack: a document without a server
// section (every document before it, every shard) reads as before, one
// with it round-trips, and the table prints its columns only when it is
// there, with "not captured" rather than zeros.
func TestServerSectionIsOptionalAndReadBack(t *testing.T) {
	d := docWithIntervals(t, "", []int{10, 10}, []int64{1000, 1000})
	var plain bytes.Buffer
	if err := WriteTable(&plain, d); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "server statistics") {
		t.Errorf("a document without server statistics prints their table:\n%s", plain.String())
	}
	js, _ := json.Marshal(d)
	if bytes.Contains(js, []byte(`"server"`)) {
		t.Error("a document without server statistics writes a server field")
	}

	d.Server = seedServer()
	js, _ = json.Marshal(d)
	back, err := Read(bytes.NewReader(js))
	if err != nil || back.Server.Operation("read") == nil || *back.Server.Operation("read").Statements.CPUSecondsPerOp != 0.000564 {
		t.Fatalf("the server section did not round-trip (err %v): %+v", err, back.Server)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, back); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"server statistics (SPANNER_SYS., 1 whole minutes, 12 client operations apportioned)", "564µs", "141µs", "not captured"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// TestServerSectionSurvivesReadingBackButNotAMerge: a run's report read
// back through a merger keeps its section; merged with another document it
// is dropped, with a note, since it was joined to one document's counts.
func TestServerSectionSurvivesReadingBackButNotAMerge(t *testing.T) {
	docs := shardDocs(t, testSpec(""), 2, 2, []sample{{0, 0, "read", 1000, 0}, {1, 0, "read", 1000, 0}})
	docs[0].Server = seedServer()
	one, err := Merge(docs[0])
	if err != nil || one.Server == nil {
		t.Fatalf("a report read back lost its server section (err %v)", err)
	}
	two, err := Merge(docs...)
	if err != nil || two.Server != nil || !strings.Contains(strings.Join(two.Notes, ";"), "server statistics left out") {
		t.Fatalf("a merge of two documents kept a server section (%v, err %v) or did not say it left it out: %q", two.Server, err, two.Notes)
	}
}

// TestServerSectionCheckRefusesWhatNoCollectionWrites: the section may come
// from a ConfigMap anyone in the namespace can edit.
func TestServerSectionCheckRefusesWhatNoCollectionWrites(t *testing.T) {
	d := docWithIntervals(t, "", []int{10}, []int64{1000})
	for name, mutate := range map[string]func(*Server){
		"version":           func(s *Server) { s.Version = "spanbench.io/server-stats/v9" },
		"unknown operation": func(s *Server) { s.Operations[0].Name = "bananas" },
		"negative count":    func(s *Server) { s.Operations[0].Statements.Executions = -1 },
		"NaN figure":        func(s *Server) { s.Operations[0].Statements.CPUSecondsPerOp = f64(nan()) },
		"coverage above 1":  func(s *Server) { s.Operations[0].Statements.Coverage = 2 },
		"too many minutes":  func(s *Server) { s.Minutes = make([]time.Time, 2000) },
	} {
		s := seedServer()
		mutate(s)
		if err := s.Check(d); err == nil {
			t.Errorf("%s: a server section no collection writes was accepted", name)
		}
	}
	if err := seedServer().Check(d); err != nil {
		t.Errorf("a valid server section was refused: %v", err)
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}
