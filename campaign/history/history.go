// Package history keeps a campaign's iterations as compact summaries that
// outlive their runs: per cell and operation, the counts, throughput,
// percentiles and the exact merged latency histogram. The trend reads its
// series from them after the runs and reports of old iterations have been
// pruned. The package is pure: it summarises result documents and encodes
// and decodes entries, enforcing size limits on both sides, because a
// stored entry is untrusted input.
package history

import (
	"fmt"
	"time"

	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result/histogram"
)

// SchemaVersion identifies the entry format. Decode refuses others.
const SchemaVersion = "spanbench.io/campaign-history/v1"

// Entry is one iteration's summary.
type Entry struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion string `json:"schemaVersion"`
	// Iteration names the iteration.
	Iteration string `json:"iteration"`
	// ScheduledTime is when it was due; entries are ordered by it.
	ScheduledTime time.Time `json:"scheduledTime"`
	// TemplateHash identifies the spec it ran.
	TemplateHash string `json:"templateHash,omitempty"`
	// Cells are its cells, in the matrix's order.
	Cells []Cell `json:"cells"`
	// HistogramsDropped counts histograms left out so that the entry fits
	// MaxEntryBytes; their figures are kept.
	HistogramsDropped int `json:"histogramsDropped,omitempty"`
}

// Cell is one cell's runs pooled.
type Cell struct {
	// Name names the cell.
	Name string `json:"name"`
	// Runs is the number of runs pooled (its succeeded repetitions).
	Runs int `json:"runs"`
	// Operations are its operations, in the workload's order.
	Operations []Operation `json:"operations"`
	// Monitoring is the cell's Cloud Monitoring figures (monitoring.go);
	// absent when its runs had none, and in entries written before them.
	Monitoring *MonitoringFigures `json:"monitoring,omitempty"`
	// Capacity is the cell's capacity search figures (capacity.go);
	// absent when its runs are not searches, and in entries written
	// before them.
	Capacity *CapacityFigures `json:"capacity,omitempty"`
}

// Operation is one operation's pooled figures (comparison.Pool).
type Operation struct {
	// Name is the operation's name.
	Name string `json:"name"`
	// OK, Errors and NotFound count the operations by outcome.
	OK       uint64 `json:"ok"`
	Errors   uint64 `json:"errors,omitempty"`
	NotFound uint64 `json:"notFound,omitempty"`
	// Seconds is the measured time of the runs, summed.
	Seconds float64 `json:"seconds"`
	// Throughput is OK per measured second.
	Throughput float64 `json:"throughput"`
	// Latency summarises the merged latency histogram.
	Latency histogram.Summary `json:"latency"`
	// Histogram is the merged latency histogram in result/histogram's binary
	// form (Encoder.EncodeBinary); absent when dropped to fit.
	Histogram []byte `json:"histogram,omitempty"`
	// Server is the operation's Spanner figures (server.go); absent when a
	// run of the cell had none, and in entries written before them.
	Server *ServerFigures `json:"server,omitempty"`
}

// Summarize condenses an iteration's cells into its entry: every cell
// with runs, every operation of its first run, pooled by
// comparison.PoolRuns (the rule the comparison table's figures follow).
func Summarize(iteration string, scheduled time.Time, templateHash string, cells []comparison.Cell) (Entry, error) {
	e := Entry{SchemaVersion: SchemaVersion, Iteration: iteration, ScheduledTime: scheduled.UTC(), TemplateHash: templateHash}
	var enc histogram.Encoder
	for _, c := range cells {
		if len(c.Runs) == 0 {
			continue
		}
		hc := Cell{Name: c.Name, Runs: len(c.Runs)}
		for _, t := range c.Runs[0].Totals {
			op, err := summarizeOperation(&enc, c, t.Name)
			if err != nil {
				return Entry{}, fmt.Errorf("cell %s: %w", c.Name, err)
			}
			hc.Operations = append(hc.Operations, op)
		}
		hc.Monitoring = summarizeMonitoring(c.Runs)
		hc.Capacity = summarizeCapacity(c.Runs)
		e.Cells = append(e.Cells, hc)
	}
	return e, nil
}

func summarizeOperation(enc *histogram.Encoder, c comparison.Cell, name string) (Operation, error) {
	p, err := comparison.PoolRuns(c.Runs, name)
	if err != nil {
		return Operation{}, err
	}
	op := Operation{Name: name, OK: p.Counts.OK, NotFound: p.Counts.NotFound, Seconds: p.Seconds,
		Latency: histogram.SummarizeCompact(p.Latency)}
	for _, n := range p.Counts.Errors {
		op.Errors += n
	}
	if p.Seconds > 0 {
		op.Throughput, _ = p.Throughput()
	}
	if op.Histogram, err = enc.EncodeBinary(p.Latency); err != nil {
		return Operation{}, err
	}
	op.Server = summarizeServer(c.Runs, name)
	return op, nil
}

// FindCell returns the cell, if the entry has it.
func (e *Entry) FindCell(cell string) (*Cell, bool) {
	for i := range e.Cells {
		if e.Cells[i].Name == cell {
			return &e.Cells[i], true
		}
	}
	return nil, false
}

// Find returns the cell's operation, if the entry has it.
func (e *Entry) Find(cell, op string) (*Operation, bool) {
	for i := range e.Cells {
		if e.Cells[i].Name != cell {
			continue
		}
		for j := range e.Cells[i].Operations {
			if e.Cells[i].Operations[j].Name == op {
				return &e.Cells[i].Operations[j], true
			}
		}
	}
	return nil, false
}
