// Package statuswrite holds what both reconcilers share around their one
// status write per reconcile: the write itself (Patch), the events told
// only after it succeeded, the field owner it writes as, and the short
// requeue after a step.
package statuswrite
