// Package guardrails holds the operator's limits on what a run may ask
// for (runners, duration, processing units, instance configs, images,
// toleration and node selector keys) and their check.
package guardrails
