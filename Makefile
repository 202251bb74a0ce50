# bench: one entry point for users and CI. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*##/ {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Tools
.PHONY: tools k6
tools: ## Install the pinned chart tools (helm v3/v4, helm-unittest, kubeconform, schemas) into .tools/
	bash ci/tools/install.sh

k6: ## Build k6 v0.51.0 + xk6-kubernetes v0.9.0 into .tools/bin/k6
	bash scenarios/runner/build.sh

.PHONY: runner-image
runner-image: ## Build the k6 runner image and push it: make runner-image IMAGE=<registry/repo:tag> [KIND_CLUSTER=<name>: load into kind]
	bash scenarios/runner/image.sh "$(IMAGE)" "$(KIND_CLUSTER)"

##@ Local cluster (no registry, no internet: everything built here)
.PHONY: cluster-build images cluster-up cluster-down
cluster-build: ## Build Kubernetes v1.34 components, etcd and CoreDNS from the Go module proxy
	bash ci/cluster/build.sh

images: ## Build the OCI images (pause, backend, k6 runner, ...) and import them into containerd
	bash ci/images/build.sh

cluster-up: ## Start the single-node cluster on 127.0.0.1 (root)
	bash ci/cluster/up.sh

cluster-down: ## Stop the cluster and remove everything it created (root)
	bash ci/cluster/down.sh

##@ Benchmarks
.PHONY: demo demo-clean
demo: ## Run a real dynamic benchmark end to end on a local cluster and print the results
	bash ci/demo/demo.sh

demo-clean: ## Remove the demo release and stop the local cluster
	bash ci/demo/demo.sh --clean

.PHONY: calibrate report matrix
calibrate: ## Load-generator calibration: wrk, vegeta, bare k6 and bench side by side (ARGS="--rounds 5")
	bash scenarios/calibrate/run.sh $(ARGS)

report: ## Report from summaries: make report OUT=out/report SUMMARIES="a/summary.json b/summary.json"
	bash dashboards/report/report.sh --out "$(or $(OUT),out/report)" $(SUMMARIES)

matrix: ## One run per variant, then a comparison: make matrix OUT=out/paths VARIANTS="clusterip:loadtest.target=clusterip pod:loadtest.target=pod" [ARGS="--kubeconfig F -n NS --release R -f PRESET"]
	bash dashboards/report/matrix.sh --out "$(or $(OUT),out/matrix)" $(ARGS) $(VARIANTS)

.PHONY: results
results: ## One run's runners merged from Prometheus, summary.json + report: make results TESTID=<id> PROMETHEUS=http://127.0.0.1:9090 OUT=out/<id> [ARGS="--rate 30000 --duration 180s"]
	bash dashboards/report/report.sh results --testid "$(TESTID)" --prometheus "$(PROMETHEUS)" --out "$(or $(OUT),out/$(TESTID))" $(ARGS)

##@ Tests
.PHONY: test test-chart test-scenarios test-dashboards test-cluster test-e2e test-report
test: ## Run the whole suite (what .ci/run runs)
	bash ci/test/all.sh

test-chart: ## Chart (pytest, ci/test/chart/): helm lint v3/v4, helm-unittest, kubeconform, presets, bad values
	BENCH_TEST_PARTS=chart bash ci/test/all.sh

test-scenarios: ## Scenarios (pytest, ci/test/scenarios/): lib unit tests and real k6 runs against local nginx and a real API server
	BENCH_TEST_PARTS=scenarios bash ci/test/all.sh

test-dashboards: ## Dashboards (pytest, ci/test/dashboards/): conventions and every query against a real Prometheus
	BENCH_TEST_PARTS=dashboards bash ci/test/all.sh

test-cluster: ## Local cluster smoke test (pytest, ci/test/cluster/): up, deploy, scale, DNS, down leaves nothing
	BENCH_TEST_PARTS=cluster bash ci/test/all.sh

test-e2e: ## End to end: chart + controller + k6-operator TestRun with churn on the local cluster
	BENCH_TEST_PARTS=e2e bash ci/test/all.sh

test-report: ## Report generator (pytest, ci/test/report/) on real and crafted summaries, rendered in headless Chromium
	BENCH_TEST_PARTS=report bash ci/test/all.sh
