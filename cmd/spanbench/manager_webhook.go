//go:build !runner

package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	admission "github.com/spanbench/spanbench/controllers/webhook"
	webhookcert "github.com/spanbench/spanbench/controllers/webhook/cert"
)

// webhookFlags say whether and how the manager serves the BenchmarkCampaign
// admission webhook (parseManagerFlags defines them). The defaults are the
// names config/default installs.
type webhookFlags struct {
	enabled bool
	webhookcert.Options
	// costs is the monthly bound of campaigns (--max-monthly-cost), set by
	// newManager from the cost flags.
	costs admission.Costs
}

func namespacedName(dst *types.NamespacedName) func(string) error {
	return func(v string) error {
		ns, name, ok := strings.Cut(v, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("%q is not NAMESPACE/NAME", v)
		}
		*dst = types.NamespacedName{Namespace: ns, Name: name}
		return nil
	}
}

// setupWebhook serves the campaign webhook unless --webhook=false: the
// envtest suites and the CLI never need it.
func setupWebhook(mgr ctrl.Manager, w *webhookFlags) error {
	if !w.enabled {
		return nil
	}
	return webhookcert.AddServer(mgr, w.Options, func(srv webhook.Server) { admission.Register(srv, mgr.GetScheme(), mgr.GetClient(), w.costs) })
}
