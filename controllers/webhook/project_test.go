package webhook_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	admission "github.com/spanbench/spanbench/controllers/webhook"
)

// project is the part of kubebuilder's PROJECT file that describes the API.
type project struct {
	Domain    string `json:"domain"`
	Repo      string `json:"repo"`
	Resources []struct {
		API struct {
			CRDVersion string `json:"crdVersion"`
			Namespaced bool   `json:"namespaced"`
		} `json:"api"`
		Controller bool   `json:"controller"`
		Domain     string `json:"domain"`
		Group      string `json:"group"`
		Kind       string `json:"kind"`
		Path       string `json:"path"`
		Version    string `json:"version"`
		Webhooks   *struct {
			Defaulting     bool   `json:"defaulting"`
			Validation     bool   `json:"validation"`
			WebhookVersion string `json:"webhookVersion"`
		} `json:"webhooks"`
	} `json:"resources"`
}

// TestProjectDescribesTheAPI: PROJECT lists every kind of api/v1alpha1,
// once, with the API's group, version, package and scope (the CRD's), and
// a validating and a defaulting (mutating) webhook exactly where the
// manager serves one, at the paths kubebuilder would scaffold for them.
func TestProjectDescribesTheAPI(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "PROJECT"))
	if err != nil {
		t.Fatal(err)
	}
	var p project
	if err := yaml.Unmarshal(data, &p); err != nil {
		t.Fatalf("PROJECT: %v", err)
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	apiPkg := reflect.TypeFor[v1alpha1.BenchmarkRun]().PkgPath()
	for kind, typ := range scheme.KnownTypes(v1alpha1.GroupVersion) {
		if typ.PkgPath() == apiPkg && !strings.HasSuffix(kind, "List") {
			kinds = append(kinds, kind)
		}
	}
	slices.Sort(kinds)
	srv := webhook.NewServer(webhook.Options{})
	admission.Register(srv, scheme, nil, admission.Costs{})

	var listed []string
	for _, r := range p.Resources {
		listed = append(listed, r.Kind)
		if got, want := r.Group+"."+r.Domain, v1alpha1.GroupVersion.Group; got != want || r.Domain != p.Domain {
			t.Errorf("%s: group %s in domain %s, want the API's group %s", r.Kind, r.Group, r.Domain, want)
		}
		if r.Version != v1alpha1.GroupVersion.Version || r.Path != p.Repo+"/api/"+v1alpha1.GroupVersion.Version || r.API.CRDVersion != "v1" {
			t.Errorf("%s: version %s at %s (crdVersion %s), want %s at %s/api/%s (v1)", r.Kind, r.Version, r.Path, r.API.CRDVersion,
				v1alpha1.GroupVersion.Version, p.Repo, v1alpha1.GroupVersion.Version)
		}
		if !r.Controller {
			t.Errorf("%s: controller: false, but the manager reconciles every kind", r.Kind)
		}
		if namespaced := crdScope(t, root, r.Kind) == apiextensionsv1.NamespaceScoped; r.API.Namespaced != namespaced {
			t.Errorf("%s: namespaced: %v, but its CRD says %v", r.Kind, r.API.Namespaced, namespaced)
		}
		for _, wh := range []struct {
			kind, prefix string
			declared     bool
		}{
			{"validating", "/validate-", r.Webhooks != nil && r.Webhooks.Validation},
			{"defaulting", "/mutate-", r.Webhooks != nil && r.Webhooks.Defaulting},
		} {
			path := wh.prefix + strings.ReplaceAll(v1alpha1.GroupVersion.Group, ".", "-") + "-" + v1alpha1.GroupVersion.Version + "-" + strings.ToLower(r.Kind)
			_, pattern := srv.WebhookMux().Handler(httptest.NewRequest("POST", path, nil))
			served := pattern == path
			declared := wh.declared && r.Webhooks.WebhookVersion == "v1"
			if served != declared {
				t.Errorf("%s: PROJECT declares a v1 %s webhook: %v; the manager serves %s: %v", r.Kind, wh.kind, declared, path, served)
			}
		}
	}
	slices.Sort(listed)
	if !reflect.DeepEqual(listed, kinds) {
		t.Errorf("PROJECT lists the kinds %q; api/v1alpha1 has %q (one entry each)", listed, kinds)
	}
}

// crdScope is the scope of kind's CRD in config/crd/bases.
func crdScope(t *testing.T, root, kind string) apiextensionsv1.ResourceScope {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if crd.Spec.Names.Kind == kind {
			return crd.Spec.Scope
		}
	}
	t.Fatalf("no CRD of kind %s in config/crd/bases", kind)
	return ""
}
