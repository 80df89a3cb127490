{{/* Names and labels shared by the templates. */}}

{{/* The chart name, or nameOverride. */}}
{{- define "spanbench.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object name: fullnameOverride, else the release name,
plus the chart name unless the release name already contains it. A release
named spanbench gets the names of the kustomize install (spanbench-manager).
*/}}
{{- define "spanbench.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The manager's Deployment, ClusterRole(Binding) and default service account name. */}}
{{- define "spanbench.managerName" -}}
{{- printf "%s-manager" (include "spanbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Service in front of the manager's metrics port. */}}
{{- define "spanbench.metricsServiceName" -}}
{{- printf "%s-manager-metrics" (include "spanbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The metrics-reader ClusterRole (and its binding). */}}
{{- define "spanbench.metricsReaderName" -}}
{{- printf "%s-metrics-reader" (include "spanbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The service account the ServiceMonitor scrapes the manager as. */}}
{{- define "spanbench.metricsScraperName" -}}
{{- printf "%s-metrics-scraper" (include "spanbench.fullname" .) | trunc 57 | trimSuffix "-" }}
{{- end }}

{{/* The PodMonitor of the runner pods. */}}
{{- define "spanbench.runnersName" -}}
{{- printf "%s-runners" (include "spanbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The BenchmarkCampaign admission webhook: its Service, certificate Secret (and Role), configuration (and ClusterRole). */}}
{{- define "spanbench.webhookServiceName" -}}
{{- printf "%s-webhook" (include "spanbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "spanbench.webhookSecretName" -}}
{{- printf "%s-webhook-cert" (include "spanbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "spanbench.webhookConfigurationName" -}}
{{- printf "%s-validating-webhook" (include "spanbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "spanbench.mutatingWebhookConfigurationName" -}}
{{- printf "%s-mutating-webhook" (include "spanbench.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The manager's service account. */}}
{{- define "spanbench.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "spanbench.managerName" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "spanbench.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "spanbench.selectorLabels" . }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | trunc 63 | trimSuffix "-" | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select this release's objects. */}}
{{- define "spanbench.selectorLabels" -}}
app.kubernetes.io/name: {{ include "spanbench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels that select the manager pods. */}}
{{- define "spanbench.managerSelectorLabels" -}}
{{ include "spanbench.selectorLabels" . }}
app.kubernetes.io/component: manager
{{- end }}

{{/* The manager's image reference. */}}
{{- define "spanbench.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The runner pods' image reference. */}}
{{- define "spanbench.runnerImage" -}}
{{- default (include "spanbench.image" .) .Values.runner.image }}
{{- end }}
