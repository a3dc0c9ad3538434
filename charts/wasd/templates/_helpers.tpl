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
{{- define "wasd.metricsReaderName" -}}{{ include "wasd.fullname" . }}-metrics-reader{{- end -}}
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

{{/*
The image must be named by the user: the chart has no public image, and a
made-up default would only sit in ImagePullBackOff until the install times
out. The default placeholder REGISTRY/wasd (or the ghcr.io/wasd-io/wasd of
releases before it) fails the render with one message saying what to set;
an empty name is refused by values.schema.json.
*/}}
{{- define "wasd.checkImage" -}}
{{- $repo := .Values.image.repository | default "" | trim | trimSuffix "/" -}}
{{- if has $repo (list "" "REGISTRY/wasd" "ghcr.io/wasd-io/wasd") -}}
{{- fail (printf "image.repository is not set (%q is a placeholder): the chart has no public image. Push the wasd image (scripts/image.sh) to a registry your cluster pulls from and install with --set image.repository=REGISTRY/wasd (charts/wasd/README.md, \"Install\")" $repo) -}}
{{- end -}}
{{- end -}}

{{/*
Image reference of the wasd binary: digest wins over tag; tag defaults to
appVersion. A registry — global.imageRegistry (a mirror, often set by a
parent chart), else image.registry — replaces the registry host of
image.repository (its first path element when that has a "." or ":" or is
"localhost", the rule docker uses), or goes in front of a repository without
one.
*/}}
{{- define "wasd.image" -}}
{{- include "wasd.checkImage" . -}}
{{- $repo := .Values.image.repository -}}
{{- with (coalesce (.Values.global | default dict).imageRegistry .Values.image.registry) -}}
{{- $parts := splitList "/" $repo -}}
{{- $first := first $parts -}}
{{- if and (gt (len $parts) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $repo = join "/" (prepend (rest $parts) (trimSuffix "/" .)) -}}
{{- else -}}
{{- $repo = printf "%s/%s" (trimSuffix "/" .) $repo -}}
{{- end -}}
{{- end -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repo .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
Security contexts: the values podSecurityContext / containerSecurityContext
(hardened defaults: non-root, read-only root filesystem, no privilege
escalation, every capability dropped, RuntimeDefault seccomp). A key set to
null is left out (OpenShift assigns the uid itself).
*/}}
{{- define "wasd.podSecurityContext" -}}
{{- include "wasd.withoutNulls" .Values.podSecurityContext -}}
{{- end -}}

{{- define "wasd.containerSecurityContext" -}}
{{- include "wasd.withoutNulls" .Values.containerSecurityContext -}}
{{- end -}}

{{/* toYaml of a map without its null-valued keys ("{}" when nothing is left). */}}
{{- define "wasd.withoutNulls" -}}
{{- $out := dict -}}
{{- range $k, $v := . -}}
{{- if not (kindIs "invalid" $v) -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
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
CEL for the Deployment webhooks' matchConditions. Every selection is guarded
by has() (and oldObject, null on CREATE, by a null check) so an expression
can never fail: a failing condition would apply the failurePolicy to every
Deployment in the cluster.

wasd.optedInTerm: the object carries the annotation wasd.io/scheduling, the
field spec.scheduling, the marker label wasd.io/managed or any other
annotation under wasd.io/ (a misspelt key, which wasd warns about). Checked
on the new OR the old object, so an UPDATE that removes the annotation still
reaches the webhook (rule U2) instead of bypassing it.
*/}}
{{- define "wasd.optedInTerm" -}}
{{- $o := . -}}
{{- printf "(%s != null && ((has(%s.metadata.annotations) && %s.metadata.annotations.exists(k, k.startsWith('wasd.io/'))) || (has(%s.spec) && has(%s.spec.scheduling)) || (has(%s.metadata.labels) && 'wasd.io/managed' in %s.metadata.labels)))" $o $o $o $o $o $o $o -}}
{{- end -}}

{{/*
wasd.templateMarkerTerm: the pod template carries the marker label
wasd.io/managed. A Deployment copied without its annotation keeps it, and
its pods would be gated by the pod webhook; the mutating path removes it.
*/}}
{{- define "wasd.templateMarkerTerm" -}}
{{- $o := . -}}
{{- printf "(%s != null && has(%s.spec) && has(%s.spec.template) && has(%s.spec.template.metadata) && has(%s.spec.template.metadata.labels) && 'wasd.io/managed' in %s.spec.template.metadata.labels)" $o $o $o $o $o $o -}}
{{- end -}}

{{- define "wasd.optedInExpression" -}}
{{- printf "%s || %s" (include "wasd.optedInTerm" "object") (include "wasd.optedInTerm" "oldObject") -}}
{{- end -}}

{{/* The mutating Deployment webhook also sees a stray template marker. */}}
{{- define "wasd.mutateDeploymentExpression" -}}
{{- printf "%s || %s" (include "wasd.optedInExpression" .) (include "wasd.templateMarkerTerm" "object") -}}
{{- end -}}

{{/*
matchConditions of a Deployment entry: wasd's own, then admission.matchConditions.
Call with (dict "ctx" $ "expression" "...").
*/}}
{{- define "wasd.deploymentMatchConditions" -}}
- name: wasd-opted-in
  expression: {{ .expression | quote }}
{{- range .ctx.Values.admission.matchConditions }}
{{- if eq .name "wasd-opted-in" }}
{{- fail "admission.matchConditions: the name wasd-opted-in is the chart's own" }}
{{- end }}
- name: {{ .name | quote }}
  expression: {{ .expression | quote }}
{{- end }}
{{- end -}}

{{/* Namespaces whose objects are never sent to wasd. */}}
{{- define "wasd.namespaceSelector" -}}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
      {{- toYaml (uniq (concat (list "kube-system" .Release.Namespace) .Values.admission.excludedNamespaces)) | nindent 6 }}
  {{- with .Values.admission.ignoreNamespaceLabel }}
  - key: {{ . | quote }}
    operator: NotIn
    values: ["true"]
  {{- end }}
{{- end -}}

{{/* The Service the API server calls: name, namespace, port. */}}
{{- define "wasd.clientConfig" -}}
service:
  name: {{ include "wasd.webhookName" .ctx }}
  namespace: {{ .ctx.Release.Namespace }}
  path: {{ .path }}
  port: {{ .ctx.Values.webhook.service.port }}
{{- end -}}

{{/*
An object's annotations: its own map over commonAnnotations, as YAML (empty
when both are empty). Call with (list $ map).
*/}}
{{- define "wasd.annotations" -}}
{{- $ctx := index . 0 -}}
{{- $ann := merge (deepCopy (index . 1 | default dict)) (deepCopy ($ctx.Values.commonAnnotations | default dict)) -}}
{{- if $ann -}}
{{- toYaml $ann -}}
{{- end -}}
{{- end -}}

{{/* Annotations of the webhook configurations: admission.webhookAnnotations and cert-manager CA injection. */}}
{{- define "wasd.webhookConfigAnnotations" -}}
{{- $ann := merge (deepCopy (.Values.admission.webhookAnnotations | default dict)) (deepCopy (.Values.commonAnnotations | default dict)) -}}
{{- if eq .Values.certs.mode "certManager" -}}
{{- $_ := set $ann "cert-manager.io/inject-ca-from" (printf "%s/%s" .Release.Namespace (include "wasd.webhookName" .)) -}}
{{- end -}}
{{- if $ann -}}
{{- toYaml $ann -}}
{{- end -}}
{{- end -}}

{{/*
imagePullSecrets of every pod: global.imagePullSecrets (often set by a
parent chart) then imagePullSecrets, each name once. A YAML list.
*/}}
{{- define "wasd.imagePullSecrets" -}}
{{- $out := list -}}
{{- $seen := dict -}}
{{- range (concat ((.Values.global | default dict).imagePullSecrets | default list) (.Values.imagePullSecrets | default list)) -}}
{{- if not (hasKey $seen .name) -}}
{{- $_ := set $seen .name true -}}
{{- $out = append $out (dict "name" .name) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* Pod-level settings shared by the hook Jobs. */}}
{{- define "wasd.hookPodSpec" -}}
restartPolicy: Never
securityContext:
  {{- include "wasd.podSecurityContext" . | nindent 2 }}
{{- with (include "wasd.imagePullSecrets" . | fromYamlArray) }}
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
{{- /* The CA lives 3650 days (87600h, `wasd certs rotate`'s CA lifetime): a
     renewBefore as long would renew the CA on every pass. */ -}}
{{- if ge $hours 87600 -}}
{{- fail (printf "certs.selfManaged.renewBefore (%s) must be shorter than the CA's lifetime (87600h, 3650 days): the CA would be renewed on every pass" .Values.certs.selfManaged.renewBefore) -}}
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


{{/*
Seconds of a duration made of ms, s, m and h parts ("5s", "500ms", also
"1m30s"), as a float. The schema allows one part of those units, the form
the webhook's flags accept.
*/}}
{{- define "wasd.durationSeconds" -}}
{{- $total := 0.0 -}}
{{- $units := dict "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ms|s|m|h)" . -1 -}}
{{- $unit := regexFind "(ms|s|m|h)$" . -}}
{{- $total = addf $total (mulf (float64 (trimSuffix $unit .)) (get $units $unit)) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/*
The webhook's terminationGracePeriodSeconds: the shutdown delay (still
serving while endpoints drop the pod), the grace period for requests in
progress, and 5 s for the process to exit.
*/}}
{{- define "wasd.webhookTerminationGrace" -}}
{{- $delay := include "wasd.durationSeconds" .Values.webhook.shutdownDelay | float64 -}}
{{- $grace := include "wasd.durationSeconds" .Values.webhook.shutdownGracePeriod | float64 -}}
{{- addf $delay $grace 5 | ceil | int -}}
{{- end -}}

{{/*
topologySpreadConstraints of a component: entries without a labelSelector
get the component's selector labels. Call with (dict "ctx" $ "component" "webhook" "list" ...).
*/}}
{{- define "wasd.topologySpread" -}}
{{- $labels := include "wasd.selectorLabels" .ctx | fromYaml -}}
{{- $_ := set $labels "app.kubernetes.io/component" .component -}}
{{- $out := list -}}
{{- range .list -}}
{{- $c := deepCopy . -}}
{{- if not (hasKey $c "labelSelector") -}}
{{- $_ := set $c "labelSelector" (dict "matchLabels" $labels) -}}
{{- end -}}
{{- $out = append $out $c -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
Startup, liveness and readiness probes of a component on its "health" port;
timings from <component>.probes. Call with the component's values.
*/}}
{{- define "wasd.probes" -}}
startupProbe:
  httpGet:
    path: /healthz
    port: health
  {{- toYaml .probes.startup | nindent 2 }}
livenessProbe:
  httpGet:
    path: /healthz
    port: health
  {{- toYaml .probes.liveness | nindent 2 }}
readinessProbe:
  httpGet:
    path: /readyz
    port: health
  {{- toYaml .probes.readiness | nindent 2 }}
{{- end -}}

{{/*
The system-* priority classes that GKE's quota admission limits, as used by
the chart's long-running pods outside kube-system: a JSON list of
{"class": name, "pods": replicas} (empty list when none).
*/}}
{{- define "wasd.criticalPods" -}}
{{- $out := list -}}
{{- if ne .Release.Namespace "kube-system" -}}
{{- range $c := list .Values.webhook .Values.reconciler -}}
{{- if has $c.priorityClassName (list "system-cluster-critical" "system-node-critical") -}}
{{- $out = append $out (dict "class" $c.priorityClassName "pods" ($c.replicaCount | int)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
The backends the release enables: allowedBackends, or just backend.
A list of names (as a comma-separated string: templates return strings).
*/}}
{{- define "wasd.enabledBackends" -}}
{{- if .Values.allowedBackends -}}
{{- join "," .Values.allowedBackends -}}
{{- else -}}
{{- .Values.backend -}}
{{- end -}}
{{- end -}}

{{/*
The backend flags, the same for the webhook and the reconciler (issue 16):
--backend always; --allowed-backends when set; a backend's cluster facts
when that backend is enabled and the value is set.
*/}}
{{- define "wasd.backendArgs" -}}
{{- $enabled := splitList "," (include "wasd.enabledBackends" .) }}
- --backend
- {{ .Values.backend | quote }}
{{- if .Values.allowedBackends }}
- --allowed-backends
- {{ join "," .Values.allowedBackends | quote }}
{{- end }}
{{- with .Values.clusterFacts }}
{{- if has "volcano" $enabled }}
{{- if .volcanoTopologyTiers }}
{{- $tiers := list }}
{{- range $key := keys .volcanoTopologyTiers | sortAlpha }}
{{- $tiers = append $tiers (printf "%s=%v" $key (index $.Values.clusterFacts.volcanoTopologyTiers $key)) }}
{{- end }}
- --volcano-topology-tiers
- {{ join "," $tiers | quote }}
{{- end }}
{{- if .volcanoQueue }}
- --volcano-queue
- {{ .volcanoQueue | quote }}
{{- end }}
{{- end }}
{{- if has "kai" $enabled }}
{{- if .kaiQueue }}
- --kai-queue
- {{ .kaiQueue | quote }}
{{- end }}
{{- if .kaiTopology }}
- --kai-topology
- {{ .kaiTopology | quote }}
{{- end }}
{{- if .kaiTopologyLevels }}
- --kai-topology-levels
- {{ join "," .kaiTopologyLevels | quote }}
{{- end }}
{{- end }}
{{- if and (has "coscheduling" $enabled) .coschedulingSchedulerName }}
- --coscheduling-scheduler-name
- {{ .coschedulingSchedulerName | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* RBAC rules of a component whose /metrics checks bearer tokens (metrics.secure). */}}
{{- define "wasd.metricsAuthRules" -}}
{{- if .Values.metrics.secure }}
  - apiGroups: ["authentication.k8s.io"]
    resources: ["tokenreviews"]
    verbs: ["create"]
  - apiGroups: ["authorization.k8s.io"]
    resources: ["subjectaccessreviews"]
    verbs: ["create"]
{{- end }}
{{- end -}}

{{/* --metrics-secure and, when secure, the pair it serves (the webhook's serving pair by default). */}}
{{- define "wasd.metricsArgs" -}}
- {{ printf "--metrics-secure=%t" .Values.metrics.secure | quote }}
{{- end -}}
