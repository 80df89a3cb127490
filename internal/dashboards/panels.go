package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// DatasourceVariable names the dashboards' Prometheus datasource variable;
// every panel and every query variable uses it, so one dashboard serves
// whichever Prometheus the user picks.
const DatasourceVariable = "datasource"

// query is one PromQL target of a panel.
type query struct {
	expr   string
	legend string
	// table asks for an instant query in table format; instant for an
	// instant query in time series format (bars of one value each).
	table, instant bool
}

// panel is what every panel states: a title, a description, a unit and at
// least one query. The kind-specific builders below turn it into a panel.
type panel struct {
	title, description, unit string
	width, height            uint32
	queries                  []query
}

func ptr[T any](v T) *T { return &v }

// datasource refers to the datasource variable.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${" + DatasourceVariable + "}")}
}

func targets(qs []query) []cog.Builder[variants.Dataquery] {
	out := make([]cog.Builder[variants.Dataquery], 0, len(qs))
	for i, q := range qs {
		b := prometheus.NewDataqueryBuilder().
			Datasource(datasource()).
			RefId(string(rune('A' + i))).
			Expr(strings.TrimSpace(q.expr))
		if q.table {
			b = b.Instant().Format(prometheus.PromQueryFormatTable)
		} else if q.instant {
			b = b.Instant().LegendFormat(q.legend)
		} else {
			b = b.Range().LegendFormat(q.legend)
		}
		out = append(out, b)
	}
	return out
}

func size(p panel) (w, h uint32) {
	w, h = p.width, p.height
	if w == 0 {
		w = 12
	}
	if h == 0 {
		h = 8
	}
	return w, h
}

func timeSeries(p panel) *timeseries.PanelBuilder {
	w, h := size(p)
	return timeseries.NewPanelBuilder().
		Title(p.title).Description(p.description).Unit(p.unit).
		Datasource(datasource()).Targets(targets(p.queries)).
		Span(w).Height(h).
		LineWidth(1).FillOpacity(10).ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().
			ShowLegend(true).DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).Calcs([]string{"mean", "max", "lastNotNull"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending))
}

func statPanel(p panel) *stat.PanelBuilder {
	w, h := size(p)
	return stat.NewPanelBuilder().
		Title(p.title).Description(p.description).Unit(p.unit).
		Datasource(datasource()).Targets(targets(p.queries)).
		Span(w).Height(h).
		GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
}

func barGauge(p panel) *bargauge.PanelBuilder {
	w, h := size(p)
	return bargauge.NewPanelBuilder().
		Title(p.title).Description(p.description).Unit(p.unit).
		Datasource(datasource()).Targets(targets(p.queries)).
		Span(w).Height(h).
		Orientation(common.VizOrientationHorizontal).
		DisplayMode(common.BarGaugeDisplayModeBasic).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
}

// column names a table column that a query's value fills, and its unit.
type column struct {
	field, title, unit string
}

// tablePanel joins instant queries on their labels (the merge
// transformation) into one row per label set, hides the columns no reader
// needs, and names and units the value columns.
func tablePanel(p panel, hide []string, cols []column) *table.PanelBuilder {
	w, h := size(p)
	exclude := map[string]bool{"Time": true, "__name__": true}
	for _, f := range hide {
		exclude[f] = true
	}
	rename := map[string]string{}
	for _, c := range cols {
		rename[c.field] = c.title
	}
	b := table.NewPanelBuilder().
		Title(p.title).Description(p.description).Unit(p.unit).
		Datasource(datasource()).Targets(targets(p.queries)).
		Span(w).Height(h).
		Filterable(true).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": exclude, "renameByName": rename,
		}})
	for _, c := range cols {
		b = b.OverrideByName(c.title, []dashboard.DynamicConfigValue{{Id: "unit", Value: c.unit}})
	}
	return b
}

// Units the panels use, named for what they measure.
const (
	unitSeconds = units.Seconds
	unitOps     = units.OpsPerSecond
	unitRatio   = units.PercentUnit
	unitCount   = units.Short
	unitText    = "string"
)
