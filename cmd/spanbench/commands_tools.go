//go:build !runner

package main

// toolCommands are the manager and the tools of the full binary.
var toolCommands = []command{
	{"campaign", "run every cell of a BenchmarkCampaign once, in order, and print the comparison", campaignCommand},
	{"manager", "run the Kubernetes controller manager", managerCommand},
	{"report", "print a result file, or several shard results merged exactly", reportCommand},
	{"preflight", "check the credentials, IAM permissions, configuration and quota a BenchmarkRun needs, creating nothing", preflightCommand},
	{"compare", "compare variants' result files with a baseline's, with confidence intervals", compareCommand},
}
