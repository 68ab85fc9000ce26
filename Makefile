# kafkachaos: make chaos runs the main job, make test runs the tests.
SHELL         := /bin/bash
KAFKA_VERSION ?= 4.4.0
GO            ?= go
GOTESTFLAGS   ?=
BIN           := bin/kafkachaos

.PHONY: all build test unit lint bench kafka-dist clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/kafkachaos

# The tests: unit tests against the kfake Kafka-protocol fake, and the
# integration tests against real Kafka brokers (fetched with Maven).
test: lint kafka-dist
	$(GO) test -count=1 -timeout 60m $(GOTESTFLAGS) ./...

# Only the fast tests (no real brokers needed).
unit:
	$(GO) test -count=1 -short ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./steadystate/

# Apache Kafka's jars, fetched from Maven Central into .cache/kafka/<version>.
kafka-dist:
	bash scripts/fetch-kafka.sh $(KAFKA_VERSION)

clean:
	rm -rf bin
