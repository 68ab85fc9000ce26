# The project's image, ghcr.io/kafkachaos/kafkachaos: the kafkachaos binary
# (the in-cluster steady-state agents run `kafkachaos steadystate --agent`)
# and the compiled suite, kafkachaos-suites, for running the suite in the
# cluster (manifests/rbac/suite-job.yaml). make kind-up builds it and
# kafkachaos kind up loads it into the kind nodes:
#   docker build -t ghcr.io/kafkachaos/kafkachaos:dev .

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Neither needs cgo, so they run on a base without libc.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags='-s -w' -o /out/kafkachaos ./cmd/kafkachaos
RUN CGO_ENABLED=0 go test -c -trimpath -buildvcs=false -o /out/kafkachaos-suites ./suites

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kafkachaos /out/kafkachaos-suites /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/kafkachaos"]
