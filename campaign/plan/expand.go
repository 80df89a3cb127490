package plan

import "github.com/spanbench/spanbench/api/v1alpha1"

// Expand plans a campaign's cells and finds its baseline among them. It
// is the one check, beyond the schema, that a campaign can run: the CLI
// refuses a campaign it fails, the controller stalls one, and the
// admission webhook denies one at kubectl apply. Its errors are *Error.
func Expand(spec *v1alpha1.BenchmarkCampaignSpec) (cells []Cell, baseline int, err error) {
	cells, err = Cells(spec)
	if err != nil {
		return nil, 0, err
	}
	baseline, err = Baseline(spec, cells)
	if err != nil {
		return nil, 0, err
	}
	return cells, baseline, nil
}
