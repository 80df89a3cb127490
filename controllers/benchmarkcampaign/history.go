package benchmarkcampaign

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/history"
)

// A campaign's history is one ConfigMap per succeeded iteration,
// <iteration>-history, owned by the campaign and labelled
// spanbench.io/campaign and spanbench.io/history (never
// spanbench.io/iteration, so pruning an iteration's objects spares it).
// Its binaryData[historyKey] is the iteration's history.Entry: per cell
// and operation the counts, throughput, percentiles and merged latency
// histogram. The history keeps the newest trend.iterations entries within
// history.MaxTotalBytes; the trend reads its series from it after the
// iteration's runs are pruned.

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;delete

// Keys of the history's ConfigMaps.
const (
	// LabelHistory marks a campaign's history ConfigMap; its value names
	// the iteration summarised.
	LabelHistory = "spanbench.io/history"
	// historyKey is the binaryData key of the encoded entry.
	historyKey = "entry.json.gz"
	// historyPage is how many history ConfigMaps one List returns: at
	// most history.MaxEntryBytes each, a page stays below 10 MiB.
	historyPage = 10
	// maxHistoryObjects bounds the history ConfigMaps read: trend.iterations
	// allows 500, the rest is room for a bound just lowered.
	maxHistoryObjects = 600
)

// Reasons of the HistoryReady condition.
const (
	reasonHistoryReady    = "HistoryRead"
	reasonInvalidHistory  = "InvalidHistory"
	reasonHistoryNotSaved = "HistoryNotSaved"
	reasonTrendFailed     = "TrendFailed"
)

// iterationEnded keeps what outlives an ended iteration: a succeeded
// iteration's summary joins the history, the history is trimmed to its
// bound, the trend is analysed over it, and the history limits prune old
// iterations' runs and objects. What goes wrong with the history is said
// in the HistoryReady condition; only API errors are returned.
func (r *BenchmarkCampaignReconciler) iterationEnded(ctx context.Context, p *pass, it *v1alpha1.IterationStatus, cells []comparison.Cell) error {
	var problems []string
	if it.Outcome == v1alpha1.IterationSucceeded {
		problem, err := r.saveHistory(ctx, p.c, it, cells)
		if err != nil {
			// Not ended yet: the next pass completes the iteration again
			// and retries, rather than losing its summary.
			it.Outcome = v1alpha1.IterationRunning
			return err
		}
		problems = appendProblem(problems, reasonHistoryNotSaved, problem)
	}
	entries, invalid, err := r.readHistory(ctx, p.c)
	if err != nil {
		return err
	}
	// A bad entry is named, and the trend reads the others.
	problems = append(problems, invalid...)
	problems = appendProblem(problems, reasonTrendFailed, analyseTrend(p.c, entries))
	setHistoryCondition(p, len(entries), problems)
	return r.pruneIterations(ctx, p)
}

func appendProblem(problems []string, reason, problem string) []string {
	if problem == "" {
		return problems
	}
	return append(problems, reason+": "+problem)
}

// setHistoryCondition sets HistoryReady: True with the number of
// iterations kept, or False naming every problem (at most the first
// three, then a count).
func setHistoryCondition(p *pass, kept int, problems []string) {
	cond := metav1.Condition{Type: v1alpha1.CampaignHistoryReady, Status: metav1.ConditionTrue, Reason: reasonHistoryReady,
		Message: fmt.Sprintf("%d iteration(s) in the history", kept), ObservedGeneration: p.c.Generation, LastTransitionTime: metav1.NewTime(p.now)}
	if len(problems) > 0 {
		cond.Status = metav1.ConditionFalse
		cond.Reason, _, _ = strings.Cut(problems[0], ":")
		shown := problems[:min(3, len(problems))]
		cond.Message = strings.Join(shown, "; ")
		if more := len(problems) - len(shown); more > 0 {
			cond.Message += fmt.Sprintf("; and %d more", more)
		}
		p.outbox.Warning(cond.Reason, cond.Message)
	}
	meta.SetStatusCondition(&p.c.Status.Conditions, cond)
}

// historyName names an iteration's history ConfigMap.
func historyName(iteration string) string { return iteration + "-history" }

// saveHistory writes the iteration's entry once: a retry after a crash
// finds it and is done. It returns what kept the entry from being saved.
func (r *BenchmarkCampaignReconciler) saveHistory(ctx context.Context, c *v1alpha1.BenchmarkCampaign, it *v1alpha1.IterationStatus, cells []comparison.Cell) (string, error) {
	entry, err := history.Summarize(it.Name, it.ScheduledTime.Time, it.TemplateHash, cells)
	if err != nil {
		return fmt.Sprintf("iteration %s: %v", it.Name, err), nil
	}
	data, err := history.Encode(entry)
	if err != nil {
		return fmt.Sprintf("iteration %s: %v", it.Name, err), nil
	}
	cm := newHistoryConfigMap(c, it.Name, data)
	if err := controllerutil.SetControllerReference(c, cm, r.Scheme); err != nil {
		return "", err
	}
	err = r.Create(ctx, cm)
	if !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	existing := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cm), existing); err != nil {
		return "", err
	}
	if !isHistoryOf(existing, c) {
		return fmt.Sprintf("ConfigMap %s exists and is not this campaign's history; it was left alone", cm.Name), nil
	}
	return "", nil
}

// newHistoryConfigMap builds the ConfigMap of an iteration's entry.
func newHistoryConfigMap(c *v1alpha1.BenchmarkCampaign, iteration string, data []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: historyName(iteration), Namespace: c.Namespace,
			Labels: map[string]string{v1alpha1.LabelCampaign: c.Name, LabelHistory: iteration}},
		BinaryData: map[string][]byte{historyKey: data},
	}
}

// isHistoryOf says whether cm is c's: controlled by it and labelled so.
func isHistoryOf(cm *corev1.ConfigMap, c *v1alpha1.BenchmarkCampaign) bool {
	return metav1.IsControlledBy(cm, c) && cm.Labels[v1alpha1.LabelCampaign] == c.Name && cm.Labels[LabelHistory] != ""
}

// storedEntry is one history ConfigMap, decoded if it could be.
type storedEntry struct {
	cm    *corev1.ConfigMap
	entry history.Entry
	size  int
	err   error
}

// readHistory reads the campaign's history, trims it to its bound
// (newest trend.iterations entries within history.MaxTotalBytes; the
// oldest go first) and returns the entries kept, with their histograms
// dropped (the trend reads figures; memory stays small), and a problem
// for every ConfigMap that is not a valid entry. Invalid ones are kept
// for a human to inspect until they fall out of the bound.
func (r *BenchmarkCampaignReconciler) readHistory(ctx context.Context, c *v1alpha1.BenchmarkCampaign) ([]history.Entry, []string, error) {
	stored, problems, err := r.listHistory(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(stored, func(i, j int) bool { return stored[i].newerThan(&stored[j]) })
	sizes := make([]int, len(stored))
	for i := range stored {
		sizes[i] = stored[i].size
	}
	kept := history.Bound(sizes, c.Spec.Trend.IterationCount())
	for i := range stored[kept:] {
		if err := r.Delete(ctx, stored[kept+i].cm); client.IgnoreNotFound(err) != nil {
			return nil, nil, err
		}
	}
	var entries []history.Entry
	for _, s := range stored[:kept] {
		if s.err != nil {
			problems = append(problems, fmt.Sprintf("%s: ConfigMap %s: %v", reasonInvalidHistory, s.cm.Name, s.err))
			continue
		}
		entries = append(entries, s.entry)
	}
	return entries, problems, nil
}

// listHistory lists and decodes the campaign's history ConfigMaps, a
// page at a time, at most maxHistoryObjects.
func (r *BenchmarkCampaignReconciler) listHistory(ctx context.Context, c *v1alpha1.BenchmarkCampaign) ([]storedEntry, []string, error) {
	var out []storedEntry
	var problems []string
	opts := []client.ListOption{client.InNamespace(c.Namespace), client.MatchingLabels{v1alpha1.LabelCampaign: c.Name},
		client.HasLabels{LabelHistory}, client.Limit(historyPage)}
	for cont := ""; ; {
		list := &corev1.ConfigMapList{}
		if err := r.APIReader.List(ctx, list, append(opts, client.Continue(cont))...); err != nil {
			return nil, nil, err
		}
		for i := range list.Items {
			if cm := &list.Items[i]; isHistoryOf(cm, c) {
				out = append(out, decodeStored(cm))
			}
		}
		if cont = list.Continue; cont == "" {
			return out, problems, nil
		}
		if len(out) >= maxHistoryObjects {
			problems = append(problems, fmt.Sprintf("%s: more than %d history ConfigMaps; the rest were not read", reasonInvalidHistory, maxHistoryObjects))
			return out, problems, nil
		}
	}
}

// decodeStored decodes cm's entry, keeping its figures only.
func decodeStored(cm *corev1.ConfigMap) storedEntry {
	data := cm.BinaryData[historyKey]
	s := storedEntry{cm: cm, size: len(data)}
	if data == nil {
		s.err = fmt.Errorf("no binaryData %s", historyKey)
	} else {
		s.entry, s.err = history.Decode(data)
	}
	if s.err == nil && s.entry.Iteration != cm.Labels[LabelHistory] {
		s.err = fmt.Errorf("entry of iteration %q in the ConfigMap of iteration %q", s.entry.Iteration, cm.Labels[LabelHistory])
	}
	for i := range s.entry.Cells {
		for j := range s.entry.Cells[i].Operations {
			s.entry.Cells[i].Operations[j].Histogram = nil
		}
	}
	cm.BinaryData = nil
	return s
}

// newerThan orders entries newest first: by scheduled time, or, for one
// that did not decode, by the ConfigMap's creation.
func (s *storedEntry) newerThan(o *storedEntry) bool {
	a, b := s.cm.CreationTimestamp.Time, o.cm.CreationTimestamp.Time
	if s.err == nil && o.err == nil {
		a, b = s.entry.ScheduledTime, o.entry.ScheduledTime
	}
	if a.Equal(b) {
		return s.cm.Name > o.cm.Name
	}
	return a.After(b)
}
