{{/*
Names. The prefix is cut to 40 characters so that every suffixed name
(longest: "-certs-generate") stays a valid 63-character DNS label.
*/}}
{{- define "wasd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "wasd.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "wasd.webhookName" -}}{{ include "wasd.fullname" . }}-webhook{{- end -}}
{{- define "wasd.reconcilerName" -}}{{ include "wasd.fullname" . }}-reconciler{{- end -}}
{{- define "wasd.certsName" -}}{{ include "wasd.fullname" . }}-certs{{- end -}}
{{- define "wasd.cleanupName" -}}{{ include "wasd.fullname" . }}-cleanup{{- end -}}
{{/* Both webhook configurations (one of each kind) carry this name. */}}
{{- define "wasd.webhookConfigName" -}}{{ include "wasd.fullname" . }}{{- end -}}

{{- define "wasd.secretName" -}}
{{- default (printf "%s-tls" (include "wasd.webhookName" .)) .Values.certs.secretName -}}
{{- end -}}

{{- define "wasd.webhookServiceAccountName" -}}
{{- if .Values.webhook.serviceAccount.create -}}
{{- default (include "wasd.webhookName" .) .Values.webhook.serviceAccount.name -}}
{{- else -}}
{{- required "webhook.serviceAccount.name is required when webhook.serviceAccount.create is false" .Values.webhook.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "wasd.reconcilerServiceAccountName" -}}
{{- if .Values.reconciler.serviceAccount.create -}}
{{- default (include "wasd.reconcilerName" .) .Values.reconciler.serviceAccount.name -}}
{{- else -}}
{{- required "reconciler.serviceAccount.name is required when reconciler.serviceAccount.create is false" .Values.reconciler.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Labels. */}}
{{- define "wasd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "wasd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "wasd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "wasd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: wasd
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Image reference of the wasd binary: digest wins over tag; tag defaults to appVersion. */}}
{{- define "wasd.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "wasd.kubectlImage" -}}
{{- printf "%s:%s" .Values.hooks.kubectlImage.repository .Values.hooks.kubectlImage.tag -}}
{{- end -}}

{{/*
Hardened security contexts: non-root, read-only root filesystem, no
privilege escalation, every capability dropped, RuntimeDefault seccomp.
Not configurable apart from the user and group ids.
*/}}
{{- define "wasd.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.runAsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "wasd.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
Pod anti-affinity for a component. Call with (dict "ctx" $ "component" "webhook" "mode" "soft").
*/}}
{{- define "wasd.antiAffinity" -}}
{{- $labels := include "wasd.selectorLabels" .ctx | fromYaml -}}
{{- $_ := set $labels "app.kubernetes.io/component" .component -}}
{{- if eq .mode "soft" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- toYaml $labels | nindent 12 }}
{{- else if eq .mode "hard" -}}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- toYaml $labels | nindent 10 }}
{{- end -}}
{{- end -}}

{{/*
CEL for the Deployment webhooks' matchConditions: true when the new object
OR the old object is opted in (annotation wasd.io/scheduling, field
spec.scheduling, or the marker label wasd.io/managed). Looking at oldObject
too means an UPDATE that removes the annotation still reaches the webhook
(and is judged by rule U2) instead of bypassing it. oldObject is null on
CREATE; every selection is guarded by has() so the expression cannot error.
*/}}
{{- define "wasd.optedInTerm" -}}
{{- $o := . -}}
{{- printf "(%s != null && ((has(%s.metadata.annotations) && 'wasd.io/scheduling' in %s.metadata.annotations) || (has(%s.spec) && has(%s.spec.scheduling)) || (has(%s.metadata.labels) && 'wasd.io/managed' in %s.metadata.labels)))" $o $o $o $o $o $o $o -}}
{{- end -}}

{{- define "wasd.optedInExpression" -}}
{{- printf "%s || %s" (include "wasd.optedInTerm" "object") (include "wasd.optedInTerm" "oldObject") -}}
{{- end -}}

{{/* Namespaces whose objects are never sent to wasd. */}}
{{- define "wasd.namespaceSelector" -}}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
      {{- toYaml (uniq (concat (list "kube-system" .Release.Namespace) .Values.admission.excludedNamespaces)) | nindent 6 }}
{{- end -}}

{{/* The Service the API server calls: name, namespace, port. */}}
{{- define "wasd.clientConfig" -}}
service:
  name: {{ include "wasd.webhookName" .ctx }}
  namespace: {{ .ctx.Release.Namespace }}
  path: {{ .path }}
  port: {{ .ctx.Values.webhook.service.port }}
{{- end -}}

{{/* Annotations of the webhook configurations (cert-manager CA injection). */}}
{{- define "wasd.webhookConfigAnnotations" -}}
{{- if eq .Values.certs.mode "certManager" -}}
cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "wasd.webhookName" .) }}
{{- end -}}
{{- end -}}

{{/* Pod-level settings shared by the hook Jobs. */}}
{{- define "wasd.hookPodSpec" -}}
restartPolicy: Never
securityContext:
  {{- include "wasd.podSecurityContext" . | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.hooks.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.hooks.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
selfManaged: the Secret rules of `wasd certs rotate` (get, create, update
through PUT). `create` cannot be limited by name (the object does not exist
yet).
*/}}
{{- define "wasd.certSecretRules" -}}
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["create"]
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: [{{ include "wasd.secretName" . | quote }}]
  verbs: ["get", "update"]
{{- end -}}

{{/* CA injection (inject-ca, rotate): read and JSON-patch our two configurations. */}}
{{- define "wasd.caInjectionRules" -}}
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]
  resourceNames: [{{ include "wasd.webhookConfigName" . | quote }}]
  verbs: ["get", "patch"]
{{- end -}}

{{/* Arguments of `wasd certs rotate` shared by the hook Job and the rotator. */}}
{{- define "wasd.rotateArgs" -}}
- --service
- {{ include "wasd.webhookName" . }}
- --namespace
- {{ .Release.Namespace }}
- --secret
- {{ include "wasd.secretName" . }}
- --days
- {{ .Values.certs.selfManaged.days | int | quote }}
- --renew-before
- {{ .Values.certs.selfManaged.renewBefore }}
{{- end -}}

{{/* `wasd certs rotate` refuses a renewBefore not shorter than the lifetime; say so at render time. */}}
{{- define "wasd.checkRenewBefore" -}}
{{- $hours := .Values.certs.selfManaged.renewBefore | trimSuffix "h" | int -}}
{{- if ge $hours (mul (.Values.certs.selfManaged.days | int) 24) -}}
{{- fail (printf "certs.selfManaged.renewBefore (%s) must be shorter than certs.selfManaged.days (%d days)" .Values.certs.selfManaged.renewBefore (.Values.certs.selfManaged.days | int)) -}}
{{- end -}}
{{- end -}}

{{/* Container settings shared by the hook containers. */}}
{{- define "wasd.hookContainerCommon" -}}
securityContext:
  {{- include "wasd.containerSecurityContext" . | nindent 2 }}
{{- with .Values.hooks.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
