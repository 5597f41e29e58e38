# Sluice — run `make` for the list of targets.
SWIFT ?= swift
SLUICE := .build/debug/sluice

.PHONY: help build test run bench tsan clean

help: ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

build: ## Build everything (debug)
	$(SWIFT) build

test: ## Run every test (unit, store, CLI)
	$(SWIFT) build --product sluice
	$(SWIFT) test

run: build ## Import the sample data and print what the store holds
	$(SLUICE) seed SampleData/shop.model.yaml SampleData/shop.seed.yaml

bench: ## Run the benchmarks (release build); prints one BENCH line per case
	$(SWIFT) build -c release --product sluice-bench
	.build/release/sluice-bench

tsan: ## Run the tests under the thread sanitizer
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan

clean: ## Remove build products
	rm -rf .build .build-tsan out
