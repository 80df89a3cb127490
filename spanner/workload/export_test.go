package workload

import "cloud.google.com/go/spanner"

// ObserveRows lets tests see every row an operation reads.
func (o *Op) ObserveRows(f func(*spanner.Row)) { o.exec.observe = f }

// BreakTPCCPayment makes the workload's Payment skip D_YTD: a lost update
// that consistency condition 1 must catch.
func (w *Workload) BreakTPCCPayment() { w.tpcc.breakPayment = true }
