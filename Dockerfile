# The sparkrpc image: the driver (cluster mode) and the executors run it.
#   docker build -t sparkrpc:latest .
#   sparkrpc submit --master k8s://https://HOST:PORT --conf spark.kubernetes.container.image=sparkrpc:latest ...
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sparkrpc ./cmd/sparkrpc

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sparkrpc /usr/local/bin/sparkrpc
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/sparkrpc"]
