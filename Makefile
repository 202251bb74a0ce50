# bench: one entry point for users and CI. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help
# Groups (##@) as headings, one short line per target (## text; [root] = run as root). Colour only
# on a terminal: piped or redirected, the output is plain text.
help: ## Show this help
	@if [ -t 1 ]; then b='\033[1m' c='\033[36m' r='\033[0m'; else b= c= r=; fi; \
	printf 'Start here: make demo (a benchmark on a local cluster), make test (the whole suite).\n'; \
	printf '[root]: run as root (installs Debian packages, starts the local cluster).\n'; \
	awk -v b="$$b" -v c="$$c" -v r="$$r" 'BEGIN {FS = ":.*## "} \
	  /^##@ / {printf "\n%s%s%s\n", b, substr($$0, 5), r} \
	  /^[a-zA-Z0-9_-]+:.*## / {printf "  %s%-16s%s %s\n", c, $$1, r, $$2}' $(MAKEFILE_LIST)

##@ Tools
.PHONY: tools k6
tools: ## Install the pinned chart tools (helm v3/v4, helm-unittest, kubeconform)
	bash ci/tools/install.sh

k6: ## Build the local k6 (k6, xk6-kubernetes, bench's extension) into .tools/bin
	bash scenarios/runner/build.sh

.PHONY: runner-image stream-image
runner-image: ## Build and push the runner image: IMAGE=<registry/repo:tag> [KIND_CLUSTER=..]
	bash scenarios/runner/image.sh "$(IMAGE)" "$(KIND_CLUSTER)"

stream-image: ## Build and push the stream backend: IMAGE=<registry/repo:tag> [KIND_CLUSTER=..]
	bash backends/stream/image.sh "$(IMAGE)" "$(KIND_CLUSTER)"

##@ Local cluster (single node, built from source, no registry)
.PHONY: cluster-build images cluster-up cluster-down
cluster-build: ## [root] Build Kubernetes, etcd and CoreDNS (ci/versions.env) from the Go proxy
	bash ci/cluster/build.sh

images: ## [root] Build the local images (pause, backend, k6 runner, ...) into containerd
	bash ci/images/build.sh

cluster-up: ## [root] Start the single-node cluster on 127.0.0.1
	bash ci/cluster/up.sh

cluster-down: ## [root] Stop the cluster and remove everything it created
	bash ci/cluster/down.sh

##@ Benchmarks
.PHONY: demo demo-clean
demo: ## [root] A dynamic benchmark end to end on a local cluster; prints the results
	bash ci/demo/demo.sh

demo-clean: ## [root] Remove the demo release and stop the local cluster
	bash ci/demo/demo.sh --clean

.PHONY: check-scenario
check-scenario: ## Check an entry script offline (no cluster): FILE=<script.js> [ARGS="-e K=V"]
	bash scenarios/check.sh "$(FILE)" $(ARGS)

.PHONY: calibrate report matrix
calibrate: ## [root] One runner core against wrk, vegeta and bare k6 [ARGS=...]
	bash scenarios/calibrate/run.sh $(ARGS)

report: ## HTML + Markdown report: OUT=out/report SUMMARIES="a.json b.json"
	bash dashboards/report/report.sh --out "$(or $(OUT),out/report)" $(SUMMARIES)

matrix: ## One run per variant, compared: VARIANTS="name:key=value .." [ARGS=..] [LOCAL=1]
	$(if $(LOCAL),ci/e2e/matrix,bash dashboards/report/matrix.sh) --out "$(or $(OUT),out/matrix)" $(ARGS) $(VARIANTS)

.PHONY: results
# the release whose provenance (chart, values, cluster, images) results records; RELEASE= records none
RELEASE ?= bench
results: ## Merge a run's runners from Prometheus: TESTID=<id> PROMETHEUS=<url> [RELEASE=..]
	bash dashboards/report/report.sh results --testid "$(TESTID)" --prometheus "$(PROMETHEUS)" --out "$(or $(OUT),out/$(TESTID))" \
	  $(if $(RELEASE),--release "$(RELEASE)" --namespace "$(or $(NAMESPACE),bench)") $(ARGS)

.PHONY: rerun
rerun: ## Run a recorded run again: SUMMARY=out/<id>/summary.json [OUT=...] [ARGS=...]
	bash dashboards/report/rerun.sh --summary "$(SUMMARY)" --out "$(or $(OUT),out/rerun)" \
	  $(if $(LOCAL),--matrix ci/e2e/matrix) $(ARGS)

##@ Tests
.PHONY: test test-chart test-scenarios test-dashboards test-cluster test-e2e test-report test-alone
test: ## [root] The whole suite, seven parts (what CI runs)
	bash ci/test/all.sh

test-chart: ## [root] Chart part: lint, unit tests, renders, bad values, docs, licences
	BENCH_TEST_PARTS=chart bash ci/test/all.sh

test-scenarios: ## [root] Scenarios part: real k6 runs against local nginx and a real API server
	BENCH_TEST_PARTS=scenarios bash ci/test/all.sh

test-dashboards: ## [root] Dashboards part: lint, schema, every query against a real Prometheus
	BENCH_TEST_PARTS=dashboards bash ci/test/all.sh

test-cluster: ## [root] Local cluster part: up, deploy, scale, DNS, down leaves nothing
	BENCH_TEST_PARTS=cluster bash ci/test/all.sh

test-e2e: ## [root] End to end on the local cluster: chart, Traefik, TestRun with churn
	BENCH_TEST_PARTS=e2e bash ci/test/all.sh

test-report: ## [root] Report part: real and crafted summaries, rendered in headless Chromium
	BENCH_TEST_PARTS=report bash ci/test/all.sh

test-alone: ## [root] A random sample of tests, each run alone [BENCH_TEST_ALONE_SEED=N]
	BENCH_TEST_PARTS=alone bash ci/test/all.sh

.PHONY: mutants
# The tools the mutants' tests call (helm and helm-unittest, k6), as the test parts build them; warm: stamp checks.
mutants: ## Named mutants of the verdict code, each against its fast tests [ONLY="id .."]
	. lib/common.sh && . lib/venv.sh && ensure_venv bench "$$BENCH_ROOT/requirements.txt" && \
	  bash ci/tools/install.sh && bash scenarios/runner/build.sh >/dev/null && \
	  nice -n 10 "$$VENV_PYTHON" ci/tools/mutants.py $(if $(ONLY),--only $(ONLY),--record)

##@ Docs and schema (generated from one source each)
.PHONY: docs schema
docs: ## Regenerate the docs' copies: times (ci/README.md), versions (pins), table counts
	python3 ci/tools/doc-figures.py --write

# PyYAML from the project's pinned venv (requirements.txt), as the tests run the same generator.
schema: ## Write charts/bench/values.schema.json and README's key list from values.yaml
	. lib/common.sh && . lib/venv.sh && ensure_venv bench "$$BENCH_ROOT/requirements.txt" && \
	  "$$VENV_PYTHON" ci/tools/values_schema.py --write
