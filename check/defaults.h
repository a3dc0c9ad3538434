// The defaults kube-apiserver applies to an apps/v1 Deployment before
// admission webhooks see it (SetDefaults_Deployment and the pod-template
// defaults), so that `wasd check` judges a manifest exactly as the webhook
// would judge the object the API server sends. Pure; thread-safe.
#ifndef WASD_CHECK_DEFAULTS_H_
#define WASD_CHECK_DEFAULTS_H_

#include <nlohmann/json.hpp>

namespace wasd::check {

// Fills in, where absent: metadata.namespace "default", spec.replicas 1,
// spec.strategy.type RollingUpdate with maxUnavailable/maxSurge 25%,
// spec.revisionHistoryLimit 10, spec.progressDeadlineSeconds 600, and the pod
// template's restartPolicy, terminationGracePeriodSeconds, dnsPolicy,
// schedulerName, securityContext and per-container terminationMessagePath,
// terminationMessagePolicy, imagePullPolicy and port protocol. Values already
// set are kept. Does nothing when `deployment` is not an object.
void ApplyDeploymentDefaults(nlohmann::json& deployment);

}  // namespace wasd::check

#endif  // WASD_CHECK_DEFAULTS_H_
