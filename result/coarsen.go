package result

import (
	"encoding/json"
	"fmt"
)

// Coarsen merges every factor consecutive intervals into one, exactly:
// counts and histograms are added, target rates averaged, and
// IntervalSeconds multiplied by factor. Finalize then derives the warm-up
// and the totals again. The time series loses resolution and the figures
// lose nothing, except that the warm-up now ends on a coarse interval
// boundary (a Fixed warm-up is rounded up to whole coarse intervals). A
// factor below 2 changes nothing. Nothing coarsens a result to make it fit
// its store any more (results are stored whole, in chunks): Merge uses it
// to align the shards an earlier release coarsened, and a user who wants a
// coarser time series sets a longer spec.workload.interval.
func (d *Document) Coarsen(factor int) error {
	return d.coarsen(factor, newIntervalAccumulator())
}

// coarsen is Coarsen with the given accumulator.
func (d *Document) coarsen(factor int, acc *intervalAccumulator) error {
	if factor < 2 {
		return nil
	}
	coarse := make([]Interval, len(d.Intervals))
	for i, in := range d.Intervals {
		in.Index /= factor
		coarse[i] = in
	}
	if err := acc.add(coarse); err != nil {
		return fmt.Errorf("coarsening run %s: %w", d.Run, err)
	}
	for _, in := range coarse {
		acc.byIndex[in.Index].members++
	}
	for _, m := range acc.byIndex {
		m.TargetRate /= float64(m.members)
	}
	d.IntervalSeconds *= float64(factor)
	return acc.finish(d)
}

// clone deep-copies a document.
func (d *Document) clone() (*Document, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var c Document
	return &c, json.Unmarshal(b, &c)
}

// Coarsened returns a copy of d with intervals coarsened by factor, and a
// note saying so; d is not modified.
func (d *Document) Coarsened(factor int) (*Document, error) {
	return d.coarsenedWith(factor, newIntervalAccumulator())
}

// coarsenedWith is Coarsened with the given accumulator.
func (d *Document) coarsenedWith(factor int, acc *intervalAccumulator) (*Document, error) {
	c, err := d.clone()
	if err != nil {
		return nil, err
	}
	if factor < 2 {
		return c, nil
	}
	before := d.IntervalSeconds
	if err := c.coarsen(factor, acc); err != nil {
		return nil, err
	}
	c.Notes = appendNew(c.Notes, coarsenedNote(before, c.IntervalSeconds))
	return c, nil
}

// coarsenedNote is the note a coarsened document carries.
func coarsenedNote(from, to float64) string {
	return fmt.Sprintf("intervals were coarsened from %gs to %gs to fit the result in its ConfigMap; totals are exact", from, to)
}
