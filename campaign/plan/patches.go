package plan

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
	"sigs.k8s.io/kustomize/kyaml/yaml/walk"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// applyValue applies one axis value to doc, a run spec: the value at the
// axis's path, then the value's strategic-merge patch, then its JSON
// patch, as kustomize orders patchesStrategicMerge before
// patchesJson6902. It returns the changed spec.
func applyValue(doc *yaml.RNode, a *v1alpha1.MatrixAxis, v *v1alpha1.AxisValue) (*yaml.RNode, error) {
	if a.Path != "" {
		if err := SetPath(doc, a.Path, v.Value.Raw); err != nil {
			return nil, err
		}
	}
	var err error
	if v.StrategicMergePatch != nil {
		if doc, err = mergePatch(doc, v.StrategicMergePatch.Raw); err != nil {
			return nil, fmt.Errorf("strategicMergePatch: %w", err)
		}
	}
	if len(v.JSONPatch) > 0 {
		if doc, err = jsonPatch(doc, v.JSONPatch); err != nil {
			return nil, fmt.Errorf("jsonPatch: %w", err)
		}
	}
	return doc, nil
}

// mergePatch merges patch into doc with kyaml's merge2, kustomize's
// strategic merge: without an OpenAPI schema (a run spec has none in
// kyaml) it merges lists of objects by their name field and replaces
// other lists, and honours "$patch: delete" and "$patch: replace". That
// is what a run spec's lists need (operations and tables are keyed by
// name), with no patch tags on the API types, which apimachinery's
// strategicpatch would need to merge lists at all.
func mergePatch(doc *yaml.RNode, patch []byte) (*yaml.RNode, error) {
	p, err := yaml.Parse(string(patch))
	if err != nil {
		return nil, err
	}
	if p.YNode().Kind != yaml.MappingNode {
		return nil, errors.New("must be an object: fields of the run spec")
	}
	// MergeStrings' infer=true, as kustomize's patchesStrategicMerge.
	return walk.Walker{Sources: []*yaml.RNode{doc, p}, Visitor: merge2.Merger{}, InferAssociativeLists: true,
		MergeOptions: yaml.MergeOptions{ListIncreaseDirection: yaml.MergeOptionsListAppend}}.Walk()
}

// jsonPatch applies RFC 6902 operations to doc.
func jsonPatch(doc *yaml.RNode, ops []v1alpha1.JSONPatchOperation) (*yaml.RNode, error) {
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	js, err := doc.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out, err := p.Apply(js)
	if err != nil {
		return nil, err
	}
	return yaml.Parse(string(out))
}
