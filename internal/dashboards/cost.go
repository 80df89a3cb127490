package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// costLines are the lines of a run's cost (spanbench_run_cost's line
// label), as table columns.
var costLines = []string{"estimate", "instance", "storage", "runners", "total"}

const byCurrency = "namespace, run, currency"

// costPanels are the Results dashboard's cost row (docs/cost.md): a
// run's cost in Cloud Spanner prices, line by line, and per million
// operations. An unknown figure has no series (a missing price is never
// plotted as 0): its cell reads "unknown", and the run's status and
// `spanbench report` say why.
func costPanels() []cog.Builder[dashboard.Panel] {
	var qs []query
	var cols []column
	for i, line := range costLines {
		qs = append(qs, query{expr: figure("spanbench_run_cost", runMatch+`, line="`+line+`"`, byCurrency), table: true})
		cols = append(cols, column{fmt.Sprintf("Value #%c", 'A'+i), line, unitCount})
	}
	qs = append(qs, query{expr: figure("spanbench_run_cost_per_million_operations", runMatch, byCurrency), table: true})
	cols = append(cols, column{fmt.Sprintf("Value #%c", 'A'+len(costLines)), "per million operations", unitCount})
	table := tablePanel(panel{
		title:       "Cost per run",
		description: "What each selected run cost in Cloud Spanner prices, in the currency column's units: the estimate made before anything was created, then, once the run ended, the instance's compute for the time it was held, the dataset's storage, the runner pods' vCPU-hours where the admin priced them, the total, and the measured window's share of the total per million operations. \"unknown\" means no price (the embedded catalog has none for most configurations: see docs/cost.md to override it), never zero; the run's status says why.",
		unit:        unitText, width: 16, height: 9,
		queries: qs,
	}, nil, cols).NoValue("unknown")
	return []cog.Builder[dashboard.Panel]{
		table,
		barGauge(panel{
			title:       "Cost per million operations",
			description: "Each selected run's cost per million operations measured (its measured window's share of the total), in the currency named beside it: the price-performance of a configuration, comparable between runs priced in one currency. Runs whose cost is unknown are not shown.",
			unit:        unitCount, width: 8, height: 9,
			queries: []query{{
				expr: figure("spanbench_run_cost_per_million_operations", runMatch, byCurrency), legend: "{{run}} ({{currency}})", instant: true,
			}},
		}),
	}
}
