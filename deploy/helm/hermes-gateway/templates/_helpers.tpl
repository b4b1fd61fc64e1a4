{{/*
Names and labels shared by every template of the chart.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "hermes-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: fullnameOverride, or the release name with the chart's unless it holds it. */}}
{{- define "hermes-gateway.fullname" -}}
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

{{- define "hermes-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hermes-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hermes-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "hermes-gateway.labels" -}}
helm.sh/chart: {{ include "hermes-gateway.chart" . }}
{{ include "hermes-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: gateway
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "hermes-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "hermes-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference: the digest when one is given, else the tag (the appVersion by default). */}}
{{- define "hermes-gateway.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "hermes-gateway.configMapName" -}}
{{- default (include "hermes-gateway.fullname" .) .Values.existingConfigMap }}
{{- end }}

{{- define "hermes-gateway.secretName" -}}
{{- if .Values.secret.create }}
{{- include "hermes-gateway.fullname" . }}
{{- else }}
{{- .Values.secret.existingSecret }}
{{- end }}
{{- end }}

{{- define "hermes-gateway.dotenvSecretName" -}}
{{- if .Values.secret.existingDotenvSecret }}
{{- .Values.secret.existingDotenvSecret }}
{{- else if .Values.secret.dotenv }}
{{- printf "%s-dotenv" (include "hermes-gateway.fullname" .) }}
{{- end }}
{{- end }}

{{/*
The config.yaml the ConfigMap holds: the values' config, checked for what the chart relies on (a gateway: block
with a resource) so that a missing piece fails the install with one line, as the gateway would at start.
*/}}
{{- define "hermes-gateway.configYAML" -}}
{{- $gw := get (default dict .Values.config) "gateway" }}
{{- if not $gw }}
{{- fail "config.gateway is required: the gateway: block of config.yaml (resource, issuers or tokens, policy); see examples/ and docs/GATEWAY.md, or set existingConfigMap" }}
{{- end }}
{{- if not (get $gw "resource") }}
{{- fail "config.gateway.resource is required: the gateway's public URL (https://host/path), the audience its tokens carry" }}
{{- end }}
{{- toYaml .Values.config }}
{{- end }}

{{/* The grace period: the preStop sleep, the drain bound and the margin after it. */}}
{{- define "hermes-gateway.terminationGracePeriodSeconds" -}}
{{- add (int .Values.preStopSleepSeconds) (int .Values.drainSeconds) (int .Values.terminationMarginSeconds) }}
{{- end }}
