// Package children builds a BenchmarkRun's child objects as pure functions
// of the run and the operator's settings: the runner and loader Indexed
// Jobs, the runners' service account, Role and RoleBinding, and the
// protocol ConfigMaps. The reconciler creates, adopts or refuses them.
package children
