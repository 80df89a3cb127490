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
		"granularity":       func(s *Server) { s.Granularity = "DAY" },
		"NaN p99":           func(s *Server) { s.Operations[0].Statements.LatencyP99Seconds = f64(nan()) },
		"negative lock wait": func(s *Server) {
			s.Operations[1].Locks = &ServerLocks{Samples: 1, WaitSecondsShare: -1}
		},
		"too many lock ranges": func(s *Server) { s.LockRanges = make([]ServerLockRange, 11) },
		"negative apportioned": func(s *Server) { s.ApportionedOps = -1 },
		"overlong note":        func(s *Server) { s.Notes = []string{strings.Repeat("n", 2000)} },
		"negative range wait": func(s *Server) {
			s.LockRanges = []ServerLockRange{{Key: "k", WaitSeconds: -1}}
		},
		"overlong lock column": func(s *Server) {
			s.LockRanges = []ServerLockRange{{Key: "k", Columns: []string{strings.Repeat("c", 300)}}}
		},
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

// TestServerTableShowsPercentilesLocksAndTheTablesRead: the server
// latency percentiles, a transaction's p99 and lock wait, the contended
// ranges and the tables read print in the report's server table, and an
// operation without a histogram says its percentiles are not captured.
func TestServerTableShowsPercentilesLocksAndTheTablesRead(t *testing.T) {
	d := docWithIntervals(t, "", []int{10, 10}, []int64{1000, 1000})
	s := seedServer()
	s.Granularity = "10MINUTE"
	s.Operations[1] = ServerOperation{Name: "update", ClientOps: 1000,
		Statements: &ServerStatements{Minutes: 1, Coverage: 1, ClientOps: 1000, Executions: 1000, LatencyP50Seconds: f64(0.003),
			LatencyP99Seconds: f64(0.0466), LatencyDistributionCount: 1000},
		Transactions: &ServerTransactions{Minutes: 1, Coverage: 1, ClientOps: 1000, Attempts: 1000, TotalLatencyP99Seconds: f64(0.01592)},
		Locks:        &ServerLocks{Samples: 6, Ranges: 3, WaitSecondsInvolved: 3.5, WaitSecondsShare: 3}}
	s.LockRanges = []ServerLockRange{{Key: "usertable(user42)", WaitSeconds: 3, Intervals: 2, Operations: []string{"update"},
		Columns: []string{"usertable.field0"}, Modes: []string{"Exclusive"}}}
	if err := s.Check(d); err != nil {
		t.Fatalf("a valid server section was refused: %v", err)
	}
	d.Server = s
	var b bytes.Buffer
	if err := WriteTable(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"1 whole 10MINUTE intervals", "txn p99", "lock wait", "46.6ms", "15.9ms", "3s",
		"server latency percentiles not captured for: read",
		"lock contention: usertable(user42): 3s wait over 2 intervals, operations update, columns usertable.field0, modes Exclusive"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// TestServerTableShowsTheLockWaitOfAnOperationNotCaptured: a lock sample
// may carry a transaction tag the TOP tables did not keep; its wait still
// prints beside "not captured".
func TestServerTableShowsTheLockWaitOfAnOperationNotCaptured(t *testing.T) {
	d := docWithIntervals(t, "", []int{10, 10}, []int64{1000, 1000})
	d.Server = seedServer()
	d.Server.Operations[1].Locks = &ServerLocks{Samples: 1, Ranges: 1, WaitSecondsInvolved: 0.5, WaitSecondsShare: 0.5}
	var b bytes.Buffer
	if err := WriteTable(&b, d); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, "update") && strings.Contains(line, "not captured") {
			if !strings.HasSuffix(strings.TrimSpace(line), "500ms") {
				t.Errorf("the update's row %q does not end with its lock wait 500ms", line)
			}
			return
		}
	}
	t.Errorf("no not-captured row for the update:\n%s", b.String())
}
