# syntax=docker/dockerfile:1
# spanbench's one image: the manager runs /spanbench (`spanbench manager`);
# the runner and loader pods run /spanbench-runner (`runner`), the same
# code built with the tag runner, without the manager's and the tools'.
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#     -t REGISTRY/spanbench:TAG .
#
# Then install with that image: in config/default,
# `kustomize edit set image localhost/spanbench/spanbench=REGISTRY/spanbench:TAG`
# (the runners follow the manager's image), or Helm's image values.
# Without Docker (the local cluster): hack/build-images.sh builds the same
# layout — the binaries at /spanbench and /spanbench-runner, user 65532 —
# as an OCI archive.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not refetch them.
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY campaign/ campaign/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY result/ result/
COPY runner/ runner/
COPY spanner/ spanner/
ARG VERSION=dev
# Static (no libc in the final image); -trimpath for reproducible builds.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X github.com/spanbench/spanbench/spanner/session.Version=${VERSION}" \
      -o /out/spanbench ./cmd/spanbench \
 && CGO_ENABLED=0 GOOS=linux go build -trimpath -tags runner \
      -ldflags "-s -w -X github.com/spanbench/spanbench/spanner/session.Version=${VERSION}" \
      -o /out/spanbench-runner ./cmd/spanbench

# Distroless static: CA certificates (for Cloud Spanner's TLS) and tzdata,
# no shell, no package manager. Non-root: runner pods and the manager run
# with runAsNonRoot and a read-only root filesystem.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/spanbench /spanbench
# The runner and loader pods' binary: run, runner and version only.
COPY --from=build /out/spanbench-runner /spanbench-runner
USER 65532:65532
ENTRYPOINT ["/spanbench"]
