# kafkachaos: make chaos runs the main job, make test runs the tests.
SHELL         := /bin/bash
KAFKA_VERSION ?= 4.4.0
# The version the upgrade spec starts from (it rolls to KAFKA_VERSION).
UPGRADE_FROM  ?= 4.3.2
GO            ?= go
GOTESTFLAGS   ?=
# Builds keyed without the checkout's path, so a fresh clone (CI) reuses the
# Go build cache's packages; the go builds inside the tests inherit it.
GOFLAGS       ?= -trimpath
export GOFLAGS
BIN           := bin/kafkachaos

.PHONY: all build dist chaos zk-vs-kraft test fuzz soak soak-interrupts unit lint bench bench-perf kafka-dist chaos-kafka k8s-bin setup prereqs prereqs-test clean kind-up kind-chaos kind-down

all: build

# kafkachaos and the local cluster's node binary, kafkachaos-node, which
# kafkachaos cluster up finds next to it.
build:
	$(GO) build -o bin/ ./cmd/kafkachaos ./cmd/kafkachaos-node

# Ginkgo's own timeout stays under go test's, so a run that overstays is
# interrupted by Ginkgo (which runs the cleanups: faults recovered, the
# cluster taken down) rather than killed by go test.
# The main job: bring up the embedded local cluster (unless ARGS names a
# kubeconfig), deploy manifests/kafka, run the gate specs, print the summary
# table. Ginkgo's JUnit and JSON reports and our report.json go to reports/.
# The exit code is the verdict. LABELS picks other specs (a Ginkgo label
# filter); ARGS passes suite flags, e.g.
#   make chaos LABELS=gameday ARGS='-kafkachaos.config=my.yaml'
# KAFKA_VERSION=X.Y.Z (and UPGRADE_FROM) given to make are passed to the
# suite: make chaos KAFKA_VERSION=3.9.2 runs the gate on 3.9.2. Only the
# Kafka versions the chosen specs run are fetched (chaos-kafka).
REPORTS := $(CURDIR)/reports
LABELS  ?= gate
ARGS    ?=
SUITE_VERSIONS :=
ifeq ($(origin KAFKA_VERSION),command line)
SUITE_VERSIONS += -kafkachaos.kafka-version=$(KAFKA_VERSION)
endif
ifeq ($(origin UPGRADE_FROM),command line)
SUITE_VERSIONS += -kafkachaos.upgrade-from=$(UPGRADE_FROM)
endif
chaos: prereqs
	@mkdir -p $(REPORTS) && rm -f $(REPORTS)/report.json $(REPORTS)/report.html
	@$(MAKE) --no-print-directory -j2 k8s-bin chaos-kafka
	KAFKACHAOS_REPORT_DIR=$(REPORTS) $(GO) test -count=1 -timeout 190m ./suites/ -run TestSuites -v -ginkgo.v -ginkgo.timeout=180m \
	  -ginkgo.label-filter='$(LABELS)' $(SUITE_VERSIONS) \
	  -ginkgo.junit-report=$(REPORTS)/junit.xml -ginkgo.json-report=$(REPORTS)/ginkgo.json $(ARGS); \
	  rc=$$?; $(call html_report,$(REPORTS)); [ $$rc -eq 0 ] || $(call why_failed,$(REPORTS))

# html_report writes the HTML report next to report.json and says where,
# whatever the verdict (a run that wrote no report.json has none).
html_report = if [ -s $(1)/report.json ]; then echo; echo "the HTML report:"; $(GO) run ./cmd/kafkachaos report $(1)/report.json || true; fi

# why_failed ends a failed suite run with why each spec failed, as text, so
# the tail of a log (all that CI keeps) says it; Ginkgo's summary only names
# the failed specs. It exits 1 whatever it could print.
why_failed = { echo; echo "why the specs failed ($(1)/report.json):"; \
  $(GO) run ./cmd/kafkachaos report --failures $(1)/report.json || true; exit 1; }

# ZooKeeper vs KRaft, side by side: the gate and the controller kill (and
# in ZooKeeper mode the ZooKeeper leader's kill) on the zookeeper layout,
# then on the combined (KRaft) layout at the same Kafka version, each on a
# fresh local cluster, then compare's table of the two runs (A: ZooKeeper,
# B: KRaft). A failed spec does not stop the other run; compare's exit 1
# (B worse than A somewhere) is a result here, not an error.
ZK_VS_KRAFT_LABELS := gate || controller-kill || zookeeper-kill
zk-vs-kraft: prereqs
	-$(MAKE) --no-print-directory chaos LABELS='$(ZK_VS_KRAFT_LABELS)' KAFKA_VERSION=$(ZK_KAFKA_VERSION) ARGS='-kafkachaos.layout=zookeeper' REPORTS=$(REPORTS)/zookeeper
	-$(MAKE) --no-print-directory chaos LABELS='$(ZK_VS_KRAFT_LABELS)' KAFKA_VERSION=$(ZK_KAFKA_VERSION) ARGS='-kafkachaos.layout=combined' REPORTS=$(REPORTS)/kraft
	@$(GO) run ./cmd/kafkachaos compare $(REPORTS)/zookeeper/report.json $(REPORTS)/kraft/report.json; rc=$$?; [ $$rc -le 1 ]

# The tests: unit tests against kfake and client-go fakes (in parallel), the
# fuzz tests, the compiled suite (make dist) in a dry run, then
# the packages that run real components (Kafka JVMs, the Kubernetes control
# plane, Chromium rendering the HTML report) one package at a time, so a
# 2-core machine is not oversubscribed, then the suite's gate, negative,
# rbac, agents, 5 s pause, 10 s peers-only partition, broker disk-loss,
# upgrade, ZooKeeper-mode, consumer group (a member of a group of 3 on the
# classic protocol crashed), Java clients' broker kill, share group member
# kill, transaction coordinator kill and clean broker stop specs end to end
# on the local cluster (acting as manifests/rbac's ServiceAccount). It
# fetches every Kafka version its specs run (make setup).
REAL_PKGS := ./internal/localkafka/ ./steadystate/javaclients/ ./steadystate/txn/ ./localcluster/... ./suites/interrupt/ ./suites/yourkafka/ ./report/
test: prereqs-test lint setup
	$(GO) test -count=1 -short -timeout 20m $(GOTESTFLAGS) ./...
	@$(MAKE) --no-print-directory fuzz
	@$(MAKE) --no-print-directory dist
	KAFKACHAOS_REPORT_DIR=$(REPORTS)/dist bin/kafkachaos-suite -test.run TestSuites -ginkgo.label-filter=gate -kafkachaos.dry-run
	$(GO) test -count=1 -p 1 -timeout 60m $(GOTESTFLAGS) $(REAL_PKGS)
	@rm -f $(REPORTS)/test/report.json
	KAFKACHAOS_REPORT_DIR=$(REPORTS)/test $(GO) test -count=1 -timeout 60m $(GOTESTFLAGS) ./suites/ \
	  -ginkgo.label-filter='gate || negative || rbac || agents || pause-short || peers-only || disk-loss-broker || (upgrade && !upgrade-rollback) || zookeeper-mode || (group-member-crash && group-protocol-classic) || (java-pod-kill && group-protocol-classic) || java-share-member-kill || txn-coordinator-kill || broker-stop-clean' -ginkgo.v -ginkgo.timeout=50m \
	  || $(call why_failed,$(REPORTS)/test)

# The fuzz tests of what the suite reads from users and agents, each for
# FUZZTIME (their committed seeds also run in every go test). Minimizing a
# new input is bounded, or one large input eats the whole budget.
FUZZTIME ?= 10s
FUZZ := FuzzConfigLoad:./suites/ FuzzRead:./internal/properties/ FuzzDecode:./report/ FuzzMergeAgentJSON:./steadystate/ FuzzParse:./steadystate/javaclients/ FuzzDecode:./steadystate/txn/
fuzz:
	@set -e; for f in $(FUZZ); do \
	  echo "fuzzing $${f%%:*} in $${f#*:} for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$${f%%:*}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 200x "$${f#*:}"; \
	done

# A game day of SOAK (default 1h): the soak spec repeats the gate's kill
# and drain, a graceful delete, a 5 s pause and a 10 s peers-only partition
# in turn, each round judged as its own spec, while it samples the suite's
# own RSS and goroutines every 10 s. It fails when memory grows by more than
# 10 % after the first 10 minutes, when goroutines do not come back after a
# round, or when a round fails. The RSS curve goes into report.json.
SOAK ?= 1h
soak: prereqs setup
	@mkdir -p $(REPORTS) && rm -f $(REPORTS)/report.json
	KAFKACHAOS_REPORT_DIR=$(REPORTS) $(GO) test -count=1 -timeout 0 ./suites/ -run TestSuites -v -ginkgo.v -ginkgo.timeout=24h \
	  -ginkgo.label-filter=soak -kafkachaos.soak=$(SOAK) $(SUITE_VERSIONS) \
	  -ginkgo.junit-report=$(REPORTS)/junit.xml -ginkgo.json-report=$(REPORTS)/ginkgo.json $(ARGS) \
	  || $(call why_failed,$(REPORTS))

# SIGINT or SIGKILL (then kafkachaos recover) at N random moments of random
# faults on one local cluster, each followed by the check that the cluster
# is restored (make test tries 3);
# SEED=... replays a run's choices.
N ?= 50
soak-interrupts: prereqs setup
	KAFKACHAOS_INTERRUPT_POINTS=$(N) $(if $(SEED),KAFKACHAOS_INTERRUPT_SEED=$(SEED)) \
	  $(GO) test -count=1 -timeout 0 -v ./suites/interrupt/ -run 'TestInterruptedFaultsLeaveNothing/point'

# Only the fast tests (no real brokers needed).
unit:
	$(GO) test -count=1 -short ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./steadystate/

# kafkachaos steadystate against Kafka's ProducerPerformance and
# EndToEndLatency on one local cluster; JSON results in bench/results/.
# PERF_ARGS passes bench/perf's flags, e.g.
#   make bench-perf PERF_ARGS='--brokers 5 --record-sizes 100,1024'
PERF_ARGS ?=
bench-perf: prereqs kafka-dist
	$(GO) run ./bench/perf -out bench/results -kafka-version $(KAFKA_VERSION) $(PERF_ARGS)

# What the long set-up needs, checked in seconds before it starts (Go,
# Java 17+, Maven, network namespaces; for make test also Chromium, which it
# installs when run as root on Debian). Exit 2 names what is missing.
prereqs:
	@bash scripts/prereqs.sh chaos
prereqs-test:
	@bash scripts/prereqs.sh test

# The cold set-up's two long steps side by side: Maven's fetch of Kafka
# (mostly network) and the control plane's build (CPU). Both are no-ops
# when cached.
setup:
	@$(MAKE) --no-print-directory -j2 kafka-dist k8s-bin

# Only the Kafka versions make chaos's specs run: a Ginkgo dry run of
# LABELS asks the suite's table (versionsByLabel, suites/versions_test.go),
# and each version is fetched once (a no-op when cached).
chaos-kafka:
	@mkdir -p $(REPORTS)
	@$(GO) test -count=1 ./suites/ -run TestSuites -ginkgo.dry-run -ginkgo.label-filter='$(LABELS)' $(SUITE_VERSIONS) $(ARGS) \
	  -kafkachaos.versions-file=$(REPORTS)/kafka-versions >$(REPORTS)/kafka-versions.log 2>&1 \
	  || { cat $(REPORTS)/kafka-versions.log; exit 2; }
	@echo "Kafka versions for LABELS='$(LABELS)': $$(tr '\n' ' ' < $(REPORTS)/kafka-versions)"
	@for v in $$(cat $(REPORTS)/kafka-versions); do bash scripts/fetch-kafka.sh $$v || exit 1; done

# Apache Kafka's jars, fetched from Maven Central into .cache/kafka/<version>:
# the version the suite runs, the one its upgrade spec starts from, and
# the zookeeper layout's 3.9.x (whose jars also run its ZooKeeper 3.8.4
# ensemble).
ZK_KAFKA_VERSION := 3.9.2
kafka-dist:
	bash scripts/fetch-kafka.sh $(KAFKA_VERSION)
	bash scripts/fetch-kafka.sh $(UPGRADE_FROM)
	bash scripts/fetch-kafka.sh $(ZK_KAFKA_VERSION)

# etcd, kube-apiserver, kube-controller-manager and kube-scheduler, built
# once into .cache/k8s/<version>/bin (about 13 minutes cold, a no-op when
# warm).
k8s-bin:
	bash scripts/build-k8s.sh

# The kind target (needs a Docker engine; without one, kafkachaos kind up
# says so and exits 2). kind-up builds the image, creates the cluster
# (kind/kind-config.yaml: 1 control plane, 3 workers in zones a-c), loads
# the image and deploys manifests/kafka. kind-chaos runs the suite inside
# the cluster as a Job (manifests/rbac/suite-job.yaml) with the RBAC of
# manifests/rbac, since the host cannot reach the brokers' cluster names,
# and prints its log; the Job's result is the verdict.
KIND_NAME       ?= kafkachaos
KIND_KUBECONFIG ?= $(HOME)/.kafkachaos/kind/$(KIND_NAME)/kubeconfig
IMAGE           := ghcr.io/kafkachaos/kafkachaos:dev
KUBECTL         := kubectl --kubeconfig $(KIND_KUBECONFIG)
kind-up: build
	if docker info >/dev/null 2>&1; then docker build -t $(IMAGE) .; fi
	$(BIN) kind up --name $(KIND_NAME) --kafka combined --image $(IMAGE) --kubeconfig-out $(KIND_KUBECONFIG)

kind-chaos: build
	$(KUBECTL) create namespace kafkachaos --dry-run=client -o yaml | $(KUBECTL) apply -f -
	$(BIN) rbac --namespace kafka --service-account-namespace kafkachaos | $(KUBECTL) apply -f -
	$(KUBECTL) -n kafkachaos delete job kafkachaos-suite --ignore-not-found --wait
	sed 's/-ginkgo.label-filter=gate/-ginkgo.label-filter=$(LABELS)/' manifests/rbac/suite-job.yaml | $(KUBECTL) apply -f -
	$(KUBECTL) -n kafkachaos wait --for=condition=Ready pod -l app.kubernetes.io/name=kafkachaos-suite --timeout=5m || true
	$(KUBECTL) -n kafkachaos logs -f job/kafkachaos-suite
	$(KUBECTL) -n kafkachaos wait --for=condition=Complete job/kafkachaos-suite --timeout=1m

kind-down: build
	$(BIN) kind down --name $(KIND_NAME) --kubeconfig-out $(KIND_KUBECONFIG)

# A suite for people without Go, as Kubernetes ships e2e.test: bin/kafkachaos,
# bin/kafkachaos-node and bin/kafkachaos-suite, the compiled Ginkgo suite,
# which takes make chaos's flags (README: running the compiled suite).
dist: build
	$(GO) test -c -o bin/kafkachaos-suite ./suites/

clean:
	rm -rf bin
