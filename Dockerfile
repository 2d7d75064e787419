# The tributary binary in a container, for `tributary serve` (the default
# command) and `tributary migrate up`:
#
#   docker build -t tributary --build-arg VERSION=v0.1.0 --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run --rm -e DATABASE_URL=postgres://… tributary migrate up
#   docker run --rm -p 127.0.0.1:8080:8080 -e DATABASE_URL=postgres://… -e TRIBUTARY_TOKEN=… tributary
#
# Two stages: the Go toolchain builds a static binary (CGO_ENABLED=0), which
# runs alone on distroless/static (CA certificates, time zone data, no shell)
# as its non-root user. compose.yaml starts it beside Postgres.

# BUILDER and RUNTIME name the base images; a registry mirror can stand in.
ARG BUILDER=golang:1.26-bookworm
ARG RUNTIME=gcr.io/distroless/static-debian12:nonroot

FROM ${BUILDER} AS build
WORKDIR /src
# The modules first, in a layer of their own, reused until go.mod changes.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The context has no .git (see .dockerignore), so Go cannot stamp the
# commit: `tributary version` reads these instead.
ARG VERSION=""
ARG COMMIT=""
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/tributary-go/tributary/cmd/tributary/internal/cli.version=${VERSION} -X github.com/tributary-go/tributary/cmd/tributary/internal/cli.commit=${COMMIT}" \
      -o /out/tributary ./cmd/tributary

FROM ${RUNTIME}
COPY --from=build /out/tributary /usr/local/bin/tributary
# distroless's nonroot user, by number so that any base image without a
# passwd entry for it (scratch) runs the binary as non-root too.
USER 65532:65532
# serve listens on every interface of the container; publish the port on
# the host's loopback, or set TRIBUTARY_TOKEN (serve warns without one).
ENV TRIBUTARY_ADDR=0.0.0.0:8080
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/tributary"]
CMD ["serve"]
