package comparison

import (
	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// runFigure reads one figure of a run's operation that is not derived from
// its merged histograms, such as a figure Spanner or a TPC-C check reports
// per run: such a statistic is compared run by run, and a cell's figure
// in the table is the mean of its runs'.
type runFigure func(d *result.Document, op string) (float64, error)

// runFigures are the statistics read per run rather than pooled.
var runFigures = map[v1alpha1.CampaignStatistic]runFigure{
	v1alpha1.StatisticServerCPUPerOp: ServerCPUPerOp,
	v1alpha1.StatisticServerQueryP99: ServerQueryP99,
	v1alpha1.StatisticTpmC:           TpmC,
	// Cloud Monitoring's, keyed by region or API method (monitoring.go).
	v1alpha1.StatisticServerHighPriorityCPU: ServerHighPriorityCPU,
	v1alpha1.StatisticServerLatencyP99:      ServerLatencyP99,
	// The run's cost (cost.go).
	v1alpha1.StatisticCostPerMillionOps: CostPerMillionOps,
	// A capacity search's outcome (capacity.go).
	v1alpha1.StatisticCapacity:            Capacity,
	v1alpha1.StatisticCapacityPerNode:     CapacityPerNode,
	v1alpha1.StatisticCapacityRowsPerNode: CapacityRowsPerNode,
}

// eachRun is f of each run.
func eachRun(docs []*result.Document, op string, f runFigure) ([]float64, error) {
	out := make([]float64, len(docs))
	for i, d := range docs {
		v, err := f(d, op)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// meanOfRuns is the cell's figure for the table: the mean of its runs' f.
func meanOfRuns(docs []*result.Document, op string, f runFigure) (float64, error) {
	v, err := eachRun(docs, op, f)
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v)), nil
}
