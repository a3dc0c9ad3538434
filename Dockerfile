# The wasd container image: one fully static binary (glibc included) and the
# few /etc files it reads, nothing else: no shell, no loader, no libraries.
#
# The build context is the directory scripts/image.sh stages, not the
# repository root (a root build fails at the first COPY, see .dockerignore):
#   <context>/wasd                  static-pie binary, stripped
#   <context>/etc/passwd, group     root, nobody and nonroot (65532)
#   <context>/etc/nsswitch.conf     hosts: files dns (image/etc/nsswitch.conf)
# Here (no daemon, no network): scripts/image.sh, which runs
#   buildah --storage-driver vfs bud --isolation chroot -f Dockerfile <context>
# Elsewhere: scripts/image.sh --context-only, then
#   docker build -f Dockerfile build-image/context
FROM scratch

ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=https://github.com/wasd-io/wasd
# The repository's LICENSE (README.md "Licence").
ARG LICENSES=Apache-2.0
LABEL org.opencontainers.image.title="wasd" \
      org.opencontainers.image.description="Workload-Aware Scheduling for Kubernetes Deployments: admission webhook, reconciler, certificate tools" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="${LICENSES}"

COPY etc/passwd etc/group etc/nsswitch.conf /etc/
COPY wasd /wasd

# nonroot, as the chart's securityContext (runAsUser/runAsGroup 65532).
USER 65532:65532
ENTRYPOINT ["/wasd"]
