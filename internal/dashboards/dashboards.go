package dashboards

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// File is one generated dashboard: its file name under config/grafana and
// its JSON, as Grafana imports it.
type File struct {
	Name string
	JSON []byte
}

// Tag marks every spanbench dashboard; the dashboards link to each other by it.
const Tag = "spanbench"

// Generate builds every dashboard and renders it as indented JSON, in a
// stable order.
func Generate() ([]File, error) {
	var files []File
	for _, d := range []struct {
		name  string
		build func() *dashboard.DashboardBuilder
	}{
		{"spanbench-live-run.json", liveRun},
		{"spanbench-results.json", results},
		{"spanbench-campaign-comparison.json", campaignComparison},
		{"spanbench-nightly-trend.json", nightlyTrend},
	} {
		built, err := d.build().Build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		numberPanels(&built)
		out, err := json.MarshalIndent(built, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		files = append(files, File{Name: d.name, JSON: append(out, '\n')})
	}
	return files, nil
}

// numberPanels gives every panel and row a distinct id, in order: Grafana
// keys panel links, the panel editor and repeats on it.
func numberPanels(d *dashboard.Dashboard) {
	for i := range d.Panels {
		id := uint32(i + 1)
		switch p := d.Panels[i]; {
		case p.Panel != nil:
			p.Panel.Id = &id
		case p.RowPanel != nil:
			p.RowPanel.Id = id
		}
	}
}

// base is what both dashboards share: tags, links to each other, the
// datasource and namespace variables.
func base(uid, title, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{Tag}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Timezone(common.TimeZoneBrowser).
		Link(dashboard.NewDashboardLinkBuilder("spanbench").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{Tag}).AsDropdown(true).IncludeVars(true).KeepTime(true)).
		WithVariable(dashboard.NewDatasourceVariableBuilder(DatasourceVariable).
			Label("Prometheus").
			Description("The Prometheus that scrapes the spanbench manager and runner pods.").
			Type("prometheus"))
}

// labelVariable is a query variable over a label's values among the series
// the selector matches.
func labelVariable(name, label, description, selector string, multi bool) *dashboard.QueryVariableBuilder {
	def := fmt.Sprintf("label_values(%s, %s)", selector, label)
	b := dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Description(description).
		Datasource(datasource()).
		// The classic string form: every Grafana version runs it as it
		// stands, where the editor's object form (qryType) would rebuild
		// it from metric and label fields and lose the __name__ regex.
		Query(dashboard.StringOrMap{String: &def}).
		Definition(def).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(multi)
	if multi {
		// ".*" rather than a list of every value: the query stays short
		// and matches runs that appear after the variable was loaded.
		b = b.IncludeAll(true).AllValue(".*")
	}
	return b
}

// runSeries selects, by name, the series that name a run in any phase (the
// runners' live series and the manager's dataset and result series), and
// more label matchers if given.
func runSeries(matchers string) string {
	sel := `__name__=~"spanbench_target_rate|spanbench_run_dataset_rows|spanbench_run_info"`
	if matchers != "" {
		sel += ", " + matchers
	}
	return "{" + sel + "}"
}

func namespaceVariable(selector string) *dashboard.QueryVariableBuilder {
	return labelVariable("namespace", "namespace", "Namespace of the BenchmarkRun.", selector, false)
}

// Built panels are added in rows; a row groups panels that answer one
// question.
type row struct {
	title  string
	panels []cog.Builder[dashboard.Panel]
}

func withRows(b *dashboard.DashboardBuilder, rows []row) *dashboard.DashboardBuilder {
	for _, r := range rows {
		b = b.WithRow(dashboard.NewRowBuilder(r.title))
		for _, p := range r.panels {
			b = b.WithPanel(p)
		}
	}
	return b
}
