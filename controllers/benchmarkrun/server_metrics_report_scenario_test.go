package benchmarkrun_test

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/pod"
)

// readReportJoinsServerMetrics gives the finished run Cloud Monitoring
// figures in its status (the emulator has none to collect) and reads its
// report as spanbench report --run does: the figures come back as the
// document's monitoring section, with the signal that ended the warm-up.
func (h *harness) readReportJoinsServerMetrics(run *v1alpha1.BenchmarkRun) {
	h.t.Helper()
	ctx, key := context.Background(), client.ObjectKeyFromObject(run)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &v1alpha1.BenchmarkRun{}
		if err := h.c.Get(ctx, key, got); err != nil {
			return err
		}
		got.Status.ServerMetrics = &v1alpha1.ServerMetricsStatus{Alignment: &metav1.Duration{Duration: time.Minute},
			CPU:    []v1alpha1.ServerCPU{{Priority: "high", Location: "asia-northeast1", MeanPercent: "42.3", MaxPercent: "50.0"}},
			WarmUp: &v1alpha1.ServerWarmUp{EndedBy: v1alpha1.WarmUpSignalServer}}
		return h.c.Status().Update(ctx, got)
	})
	if err != nil {
		h.t.Fatalf("setting status.serverMetrics: %v", err)
	}
	doc, err := runreport.ReadReport(ctx, h.c, key, pod.RunArrivals)
	if err != nil {
		h.t.Fatal(err)
	}
	if m := doc.Monitoring; m == nil || m.Version != result.MonitoringSchemaVersion || len(m.CPU) != 1 || m.CPU[0].MeanRatio != 0.423 ||
		m.WarmUp == nil || m.WarmUp.EndedBy != result.WarmUpEndedByServer {
		h.t.Errorf("the report of a run with Cloud Monitoring figures has monitoring section %+v; want high CPU 0.423, warm-up ended by the Server", m)
	}
}
