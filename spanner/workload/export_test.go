package workload

import "cloud.google.com/go/spanner"

// ObserveRows lets tests see every row an operation reads.
func (o *Op) ObserveRows(f func(*spanner.Row)) { o.exec.observe = f }
