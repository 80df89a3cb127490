package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/xychart"
)

// The capacity search's series (docs/capacity.md, "Prometheus series"),
// which the Results dashboard's capacity row reads. The manager serves
// them from a run's status.search.
const (
	// seriesCapacity is a finished search's capacity, ops/s.
	seriesCapacity = "spanbench_run_capacity_ops_per_second"
	// seriesCapacityPerNode is the capacity per 1,000 processing units.
	seriesCapacityPerNode = "spanbench_run_capacity_per_node_ops_per_second"
	// seriesStepOffered, seriesStepAchieved and seriesStepPassed are each
	// step's offered and achieved rates and verdict (1 pass, 0 fail), by
	// its step label (1, 2, ...).
	seriesStepOffered  = "spanbench_run_search_step_offered_ops"
	seriesStepAchieved = "spanbench_run_search_step_achieved_ops"
	seriesStepPassed   = "spanbench_run_search_step_passed"
	// seriesStepFigure is each step's SLO figure by its condition label
	// (the condition's text): seconds for a latency condition, a ratio
	// otherwise; absent where not measured.
	seriesStepFigure = "spanbench_run_search_step_figure"
	// seriesSLOBound is each SLO condition's bound, in its figure's unit.
	seriesSLOBound = "spanbench_run_search_slo_bound"
)

// latencyConditions selects the SLO's latency conditions ("p99 <= 20ms",
// "p99.9(read) <= 50ms") by their text.
const latencyConditions = `condition=~"p[0-9].*"`

const byStep = "namespace, run, step"

// capacityPanels are the Results dashboard's capacity search row: the
// capacity, the latency-throughput curve from the step series, and the
// step table.
func capacityPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		statPanel(panel{
			title:       "Capacity",
			description: "The highest offered rate at which each selected run's capacity search met its SLO (docs/capacity.md); with reason ReachedMax, a lower bound. Runs that are not searches have none.",
			unit:        unitOps, width: 6, height: 9,
			queries: []query{{expr: figure(seriesCapacity, runMatch, "namespace, run"), legend: "{{run}}", instant: true}},
		}),
		statPanel(panel{
			title:       "Capacity per node",
			description: "The capacity per 1,000 processing units (one node), for comparing instances of different sizes; absent where the instance's size is not known (the emulator).",
			unit:        unitOps, width: 6, height: 9,
			queries: []query{{expr: figure(seriesCapacityPerNode, runMatch, "namespace, run"), legend: "{{run}}", instant: true}},
		}),
		curvePanel(),
		searchStepsTable(),
	}
}

// curvePanel is the latency-throughput curve: for each run and SLO latency
// condition, one point per step, the condition's figure against the
// step's achieved throughput, and the condition's bound as a line over
// the same steps. The three queries share their labels (namespace, run,
// step, condition), so that the merge joins them into one row per step;
// partitioning by run and condition makes one series of each.
func curvePanel() cog.Builder[dashboard.Panel] {
	figures := figure(seriesStepFigure, runMatch+", "+latencyConditions, byStep+", condition")
	// Each step's achieved rate and the condition's bound, carried onto
	// the figure's labels: + on (...) group_right 0 * figures.
	onFigures := func(expr, on string) string {
		return expr + " + on (" + on + ") group_right () 0 * " + figures
	}
	p := panel{
		title:       "Latency against throughput (capacity search)",
		description: "The latency-throughput curve of each selected capacity search: per SLO latency condition (its percentile over the operations it names), one point per step, the step's figure against its achieved throughput over all operations, and the condition's bound as a line over the same steps. Below the knee latency is flat; past saturation the achieved throughput stops growing while latency climbs. The capacity is the highest offered rate that passed (the Capacity panel); the report's curve (spanbench report --html) draws each operation's p50 and p99 too.",
		unit:        unitSeconds, width: 12, height: 9,
		queries: []query{
			{expr: onFigures(figure(seriesStepAchieved, runMatch, byStep), byStep), table: true},
			{expr: figures, table: true},
			{expr: onFigures(figure(seriesSLOBound, runMatch+", "+latencyConditions, "namespace, run, condition"), "namespace, run, condition"), table: true},
		},
	}
	w, h := size(p)
	return xychart.NewPanelBuilder().
		Title(p.title).Description(p.description).Unit(p.unit).
		Datasource(datasource()).Targets(targets(p.queries)).
		Span(w).Height(h).
		Mapping(xychart.SeriesMappingAuto).
		Show(xychart.XYShowModePointsAndLines).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom)).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti)).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "partitionByValues", Options: map[string]any{
			"fields": []string{"run", "condition"}, "keepFields": false,
		}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			// The x field comes first: the chart's auto mapping takes the
			// first number field as x, the others as y.
			"excludeByName": map[string]bool{"Time": true, "namespace": true, "step": true, "__name__": true},
			"indexByName":   map[string]int{"Value #A": 0, "Value #B": 1, "Value #C": 2},
			"renameByName":  map[string]string{"Value #A": "achieved", "Value #B": "figure", "Value #C": "SLO bound"},
		}}).
		OverrideByName("achieved", []dashboard.DynamicConfigValue{{Id: "unit", Value: unitOps}})
}

// searchStepsTable lists each selected search's steps.
func searchStepsTable() cog.Builder[dashboard.Panel] {
	return tablePanel(panel{
		title:       "Search steps",
		description: "Each step of the selected capacity searches: the rate offered, the successful operations per second achieved over its measured time, and whether it met every SLO condition (1 pass, 0 fail). A failing rate is run again before the search acts on it (confirmation), so a rate can appear twice or three times. The figures of each condition are in the run's status (kubectl get benchmarkrun -o yaml) and spanbench report.",
		unit:        unitText, width: 24, height: 9,
		queries: []query{
			{expr: figure(seriesStepOffered, runMatch, byStep), table: true},
			{expr: figure(seriesStepAchieved, runMatch, byStep), table: true},
			{expr: figure(seriesStepPassed, runMatch, byStep), table: true},
		},
	}, nil, []column{
		{"Value #A", "offered", unitOps},
		{"Value #B", "achieved", unitOps},
		{"Value #C", "passed", unitCount},
	})
}
