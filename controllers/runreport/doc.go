// Package runreport is a BenchmarkRun's stored report as both reconcilers
// and the CLI read it: where it is (ConfigMap, chunks or results bucket),
// how it is read back and checked against the run, and the monitoring
// section the run's status adds to it.
package runreport
