// Package argocd_test runs the BenchmarkCampaign's Argo CD health check and
// "run now" action on sample campaigns with gopher-lua, the Lua that Argo
// CD embeds, set up as Argo CD sets it up (no string or io library, a safe
// os), and checks that argocd-cm-patch.yaml carries the same scripts as
// the files.
package argocd_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

const (
	dir        = "bench.spanbench.io/BenchmarkCampaign/"
	healthLua  = dir + "health.lua"
	discovery  = dir + "actions/discovery.lua"
	runNowLua  = dir + "actions/run-now/action.lua"
	patchFile  = "argocd-cm-patch.yaml"
	healthKey  = "resource.customizations.health.bench.spanbench.io_BenchmarkCampaign"
	actionsKey = "resource.customizations.actions.bench.spanbench.io_BenchmarkCampaign"
)

// run executes script with obj as the global obj, in a state like Argo
// CD's (util/lua): package, base and table libraries, and an os library
// reduced to its clock functions; a one-second limit. It returns the
// script's return value as JSON-shaped Go values.
func run(t *testing.T, script string, obj any) any {
	t.Helper()
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.OsLibName, lua.OpenOs}} {
		l.Push(l.NewFunction(lib.open))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	safeOS := l.NewTable()
	for _, f := range []string{"clock", "date", "difftime", "time"} {
		safeOS.RawSetString(f, l.GetField(l.GetGlobal("os"), f))
	}
	l.SetGlobal("os", safeOS)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, jsonValue(t, obj)))
	if err := l.DoString(string(src)); err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return fromLua(l.Get(-1))
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for _, e := range v {
			t.Append(toLua(l, e))
		}
		return t
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case bool:
		return lua.LBool(v)
	}
	return lua.LNil
}

func fromLua(v lua.LValue) any {
	switch v := v.(type) {
	case *lua.LTable:
		if v.MaxN() > 0 {
			var out []any
			for i := 1; i <= v.MaxN(); i++ {
				out = append(out, fromLua(v.RawGetInt(i)))
			}
			return out
		}
		out := map[string]any{}
		v.ForEach(func(k, e lua.LValue) { out[k.String()] = fromLua(e) })
		return out
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return float64(v)
	case lua.LBool:
		return bool(v)
	}
	return nil
}

// campaign is a sample campaign at generation 2 whose status has the
// given conditions (type=status pairs, "Stalled=True") and observed
// generation.
func campaign(observed int64, suspend bool, conds ...string) *v1alpha1.BenchmarkCampaign {
	c := &v1alpha1.BenchmarkCampaign{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkCampaign"},
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench", Generation: 2},
	}
	if suspend {
		c.Spec.Suspend = &suspend
	}
	c.Status.ObservedGeneration = observed
	for _, kv := range conds {
		typ, status, _ := strings.Cut(kv, "=")
		c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status),
			Reason: "Test", Message: typ + " message", LastTransitionTime: metav1.Now()})
	}
	return c
}

func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name        string
		obj         *v1alpha1.BenchmarkCampaign
		status, msg string
	}{
		{"new, no status", campaign(0, false), "Progressing", "Waiting for the campaign controller"},
		{"spec not observed yet", campaign(1, false, "Ready=True", "Reconciling=False", "Stalled=False", "Regressed=False"), "Progressing", "Waiting for the controller to observe generation 2"},
		{"stalled", campaign(2, false, "Ready=False", "Reconciling=False", "Stalled=True", "Regressed=False"), "Degraded", "Stalled message"},
		{"stalled before observing", campaign(1, false, "Stalled=True"), "Degraded", "Stalled message"},
		{"regressed", campaign(2, false, "Ready=True", "Reconciling=False", "Stalled=False", "Regressed=True"), "Degraded", "Regressed: Regressed message"},
		{"regressed while the next iteration runs", campaign(2, false, "Ready=False", "Reconciling=True", "Stalled=False", "Regressed=True"), "Degraded", "Regressed: Regressed message"},
		{"iteration running", campaign(2, false, "Ready=False", "Reconciling=True", "Stalled=False", "Regressed=False"), "Progressing", "Reconciling message"},
		{"idle", campaign(2, false, "Ready=True", "Reconciling=False", "Stalled=False", "Regressed=False"), "Healthy", "Ready message"},
		{"idle and suspended", campaign(2, true, "Ready=True", "Reconciling=False", "Stalled=False", "Regressed=False"), "Suspended", "Suspended: no new iterations start"},
		{"last iteration failed", campaign(2, false, "Ready=False", "Reconciling=False", "Stalled=False", "Regressed=False"), "Degraded", "Ready message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := run(t, healthLua, tc.obj).(map[string]any)
			if !ok || got["status"] != tc.status || got["message"] != tc.msg {
				t.Errorf("health %v, want status %q, message %q", got, tc.status, tc.msg)
			}
		})
	}
}

func TestRunNowAction(t *testing.T) {
	for _, suspend := range []bool{false, true} {
		got := run(t, discovery, campaign(2, suspend))
		want := map[string]any{"run-now": map[string]any{"disabled": suspend}}
		if b, w := jsonString(t, got), jsonString(t, want); b != w {
			t.Errorf("suspend %v: discovery gives %s, want %s", suspend, b, w)
		}
	}
	before := campaign(2, false, "Ready=True")
	before.Spec.RunNow = "yesterday"
	out := run(t, runNowLua, before)
	var after v1alpha1.BenchmarkCampaign
	if err := json.Unmarshal([]byte(jsonString(t, out)), &after); err != nil {
		t.Fatalf("the action's object is no BenchmarkCampaign: %v", err)
	}
	if !regexp.MustCompile(`^argocd-[0-9]{8}T[0-9]{6}Z$`).MatchString(after.Spec.RunNow) || len(after.Spec.RunNow) > 128 {
		t.Errorf("spec.runNow %q after run-now, want a new token argocd-<UTC time> of at most 128 characters", after.Spec.RunNow)
	}
	if after.Name != before.Name || after.Status.ObservedGeneration != before.Status.ObservedGeneration {
		t.Errorf("run-now changed more than spec.runNow: %+v", after.ObjectMeta)
	}
	after.Spec.RunNow = before.Spec.RunNow
	if a, b := jsonString(t, after.Spec), jsonString(t, before.Spec); a != b {
		t.Errorf("run-now changed the spec beyond runNow:\n%s\nwas\n%s", a, b)
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPatchCarriesTheScripts: argocd-cm-patch.yaml holds the scripts as
// the files have them, so what users paste is what is tested.
func TestPatchCarriesTheScripts(t *testing.T) {
	b, err := os.ReadFile(patchFile)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	var actions struct {
		Discovery   string `json:"discovery.lua"`
		Definitions []struct {
			Name   string `json:"name"`
			Action string `json:"action.lua"`
		} `json:"definitions"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data[actionsKey]), &actions); err != nil {
		t.Fatalf("%s: %v", actionsKey, err)
	}
	if len(actions.Definitions) != 1 || actions.Definitions[0].Name != "run-now" {
		t.Fatalf("%s defines %+v, want the one action run-now", actionsKey, actions.Definitions)
	}
	for file, text := range map[string]string{healthLua: cm.Data[healthKey], discovery: actions.Discovery, runNowLua: actions.Definitions[0].Action} {
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if text != string(want) {
			t.Errorf("%s differs from %s in %s: copy the file into the patch", file, patchFile, file)
		}
	}
}
